package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.hash.KvScope;
import io.flotilla.worker.engine.AdapterStatus;
import io.flotilla.worker.engine.AdapterSupport;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.InvalidRequestException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.flotilla.worker.engine.sim.SimTesting.prompt;
import static io.flotilla.worker.engine.sim.SimTesting.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** LoRA slots of the simulated engine: load time before the first step, LRU eviction of idle adapters only. */
class AdapterSlotsTest {

    private final ManualClock clock = new ManualClock();
    private final List<Runnable> changes = new java.util.ArrayList<>();

    private SimulatedEngine engine(int slots, double loadMs, double speedup) {
        SimulatedEngine e = new SimulatedEngine(SimTesting.small().speedup(speedup)
                .adapters(new SimAdapters(List.of("sql", "chat", "code"), slots, loadMs)).build(), clock, clock,
                EngineListeners.kvEvents(new KvEventReplay()).withAdaptersChanged(() -> changes.add(() -> { })));
        return e;
    }

    /** Runs the engine until {@code sink} finishes, moving the clock 1 ms whenever nothing can run. */
    private void runUntilDone(SimulatedEngine e, RecordingSink... sinks) throws InterruptedException {
        for (int i = 0; i < 10_000 && !java.util.Arrays.stream(sinks).allMatch(RecordingSink::done); i++) {
            if (!e.runOnce()) {
                clock.advance(java.time.Duration.ofMillis(1));
            }
        }
        assertThat(sinks).allMatch(RecordingSink::done);
    }

    @Test
    void anUnknownAdapterIsRefusedAtSubmit() {
        try (SimulatedEngine e = engine(2, 0, 1)) {
            assertThatThrownBy(() -> e.submit(request("x", prompt(8, 1), 2).withScope(KvScope.lora("nope")),
                    new RecordingSink())).isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("unknown LoRA adapter 'nope'").hasMessageContaining("sql");
        }
    }

    @Test
    void theFirstRequestOfAnAdapterWaitsForItsLoadTheNextDoesNot() throws InterruptedException {
        try (SimulatedEngine e = engine(2, 400, 2)) { // 400 ms at speedup 2: 200 ms of simulated time
            RecordingSink first = new RecordingSink();
            e.submit(request("a", prompt(8, 1), 1).withScope(KvScope.lora("sql")), first);
            assertThat(e.runOnce()).as("nothing can run while the adapter loads").isFalse();
            runUntilDone(e, first);
            long firstMs = clock.elapsed().toMillis();
            assertThat(firstMs).isGreaterThanOrEqualTo(200);

            RecordingSink second = new RecordingSink();
            long before = clock.elapsed().toMillis();
            e.submit(request("b", prompt(8, 2), 1).withScope(KvScope.lora("sql")), second);
            runUntilDone(e, second);
            assertThat(clock.elapsed().toMillis() - before).as("loaded already: one prefill step").isLessThan(50);

            AdapterStatus status = e.feature(AdapterSupport.class).orElseThrow().adapterStatus();
            assertThat(status.loaded()).containsExactly("sql");
            assertThat(status.available()).containsExactly("sql", "chat", "code");
            assertThat(status.loadMs()).isEqualTo(200.0);
            assertThat(status.loads()).isEqualTo(1);
            assertThat(changes).hasSize(1);
        }
    }

    @Test
    void baseRequestsRunWhileAnAdapterLoads() throws InterruptedException {
        try (SimulatedEngine e = engine(1, 1000, 1)) {
            RecordingSink lora = new RecordingSink();
            RecordingSink base = new RecordingSink();
            e.submit(request("lora", prompt(8, 1), 1).withScope(KvScope.lora("sql")), lora);
            e.submit(request("base", prompt(8, 2), 1), base);
            runUntilDone(e, base);
            assertThat(lora.done()).isFalse();
            assertThat(clock.elapsed().toMillis()).isLessThan(1000);
            runUntilDone(e, lora);
            assertThat(clock.elapsed().toMillis()).isGreaterThanOrEqualTo(1000);
        }
    }

    @Test
    void theLeastRecentlyUsedIdleAdapterMakesRoomAndABusyOneIsNeverEvicted() throws InterruptedException {
        try (SimulatedEngine e = engine(2, 10, 1)) {
            RecordingSink sql = new RecordingSink();
            RecordingSink chat = new RecordingSink();
            e.submit(request("sql", prompt(8, 1), 1).withScope(KvScope.lora("sql")), sql);
            runUntilDone(e, sql);
            e.submit(request("chat", prompt(8, 2), 1).withScope(KvScope.lora("chat")), chat);
            runUntilDone(e, chat);
            assertThat(e.feature(AdapterSupport.class).orElseThrow().adapterStatus().loaded()).containsExactly("chat", "sql");

            // a long chat request keeps chat in use; code must evict sql (idle, least recently used)
            RecordingSink longChat = new RecordingSink();
            e.submit(request("chat-2", prompt(8, 3), 200).withScope(KvScope.lora("chat")), longChat);
            e.runOnce();
            RecordingSink code = new RecordingSink();
            e.submit(request("code", prompt(8, 4), 1).withScope(KvScope.lora("code")), code);
            runUntilDone(e, code);
            assertThat(e.feature(AdapterSupport.class).orElseThrow().adapterStatus().loaded()).containsExactly("code", "chat");
            assertThat(e.feature(AdapterSupport.class).orElseThrow().adapterStatus().unloads()).isEqualTo(1);

            // both slots in use (chat-2 runs, a code request waits behind it): sql waits for a free slot
            RecordingSink codeLong = new RecordingSink();
            e.submit(request("code-2", prompt(8, 5), 100).withScope(KvScope.lora("code")), codeLong);
            e.runOnce();
            RecordingSink sqlAgain = new RecordingSink();
            e.submit(request("sql-2", prompt(8, 6), 1).withScope(KvScope.lora("sql")), sqlAgain);
            for (int i = 0; i < 20; i++) {
                e.runOnce();
            }
            assertThat(sqlAgain.done()).isFalse();
            assertThat(e.feature(AdapterSupport.class).orElseThrow().adapterStatus().loaded()).doesNotContain("sql");
            runUntilDone(e, longChat, codeLong, sqlAgain);
            assertThat(sqlAgain.error).isNull();
            assertThat(e.feature(AdapterSupport.class).orElseThrow().adapterStatus().loaded()).contains("sql").hasSize(2);
        }
    }

    @Test
    void anEngineWithoutAdaptersAdvertisesNone() {
        try (SimulatedEngine e = new SimulatedEngine(SimTesting.small().build(), clock, clock, EngineListeners.NONE)) {
            assertThat(e.feature(AdapterSupport.class)).isEmpty();
        }
    }
}
