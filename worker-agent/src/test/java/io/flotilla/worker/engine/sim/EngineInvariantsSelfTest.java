package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.KvEvent;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The property's checks must be able to fail: feed them deliberately broken event streams. */
class EngineInvariantsSelfTest {

    /** Submits enough distinct prompts to the 12-block engine that blocks get evicted. */
    private static void evictingWorkload(KvEventReplayPropertyTest.Run run) {
        for (int i = 0; i < 6; i++) {
            run.apply(new KvEventReplayPropertyTest.Submit(i % 3, 20, i % 4, 2));
            run.apply(new KvEventReplayPropertyTest.Step(6));
        }
    }

    @Test
    void theCorrectStreamPasses() {
        KvEventReplayPropertyTest.Run run = new KvEventReplayPropertyTest.Run(new KvEventReplay());
        evictingWorkload(run);
        assertThat(run.replay.removedInOrder()).isNotEmpty();
        assertThat(run.breaches()).isEmpty();
    }

    @Test
    void aLostRemovedEventIsDetected() {
        KvEventReplay replay = new KvEventReplay();
        KvEventReplayPropertyTest.Run run = new KvEventReplayPropertyTest.Run(replay, (pos, events) -> {
            List<KvEvent> kept = events.stream().filter(e -> !e.hasRemoved()).toList();
            if (kept.isEmpty()) {
                replay.position = pos; // the batch arrived, its removals were lost
            } else {
                replay.onEvents(pos, kept);
            }
        });
        evictingWorkload(run);
        assertThat(run.breaches()).anySatisfy(b -> assertThat(b).contains("replayed events give"));
    }

    @Test
    void aLostStoredEventIsDetected() {
        KvEventReplay replay = new KvEventReplay();
        KvEventReplayPropertyTest.Run run = new KvEventReplayPropertyTest.Run(replay, (pos, events) -> {
            if (pos != 2) {
                replay.onEvents(pos, events);
            }
        });
        evictingWorkload(run);
        assertThat(run.breaches()).isNotEmpty();
    }
}
