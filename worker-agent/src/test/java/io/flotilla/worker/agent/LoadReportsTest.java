package io.flotilla.worker.agent;

import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.EngineTiming;
import io.flotilla.protocol.v1.WorkerCapacity;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.openai.AwaitingSink;
import io.flotilla.worker.engine.sim.ManualClock;
import io.flotilla.worker.engine.sim.SimEngineConfig;
import io.flotilla.worker.engine.sim.SimulatedEngine;
import io.flotilla.worker.identity.WorkerIdentity;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** A worker's load goes out when it changed, and an unchanged one again only after the heartbeat interval. */
class LoadReportsTest {

    private static final long HEARTBEAT_MS = 1000;

    @Test
    void aSteadyLoadIsRepeatedAtTheHeartbeatAndAChangedOneAtTheNextSample() {
        ManualClock clock = new ManualClock();
        try (SimulatedEngine engine = new SimulatedEngine(SimEngineConfig.builder().kvBytesPerBlock(0).build(), clock, clock,
                EngineListeners.NONE)) {
            MockProducer<String, Object> sent = new MockProducer<>(true, null, new StringSerializer(), (t, v) -> new byte[0]);
            WorkerIdentity id = new WorkerIdentity("worker-7", 7, WorkerRole.WORKER_ROLE_AGGREGATED,
                    KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16, "h:1", "h:2", "h:3");
            StatusReporter status = new StatusReporter(id, engine, sent, clock, 3000,
                    Advertisement.simulated(WorkerCapacity.newBuilder().setTotalKvBlocks(64).build(), EngineTiming.getDefaultInstance()),
                    new StatusReporter.Registration("builtin:cl100k_base", "sim", Optional.empty()));

            assertThat(status.reportLoadIfChanged(HEARTBEAT_MS)).as("the first report").isTrue();
            clock.advance(Duration.ofMillis(250));
            assertThat(status.reportLoadIfChanged(HEARTBEAT_MS)).as("idle, 250 ms later").isFalse();
            clock.advance(Duration.ofMillis(500));
            assertThat(status.reportLoadIfChanged(HEARTBEAT_MS)).as("idle, 750 ms later").isFalse();

            engine.submit(EngineRequest.of("r1", new int[]{1, 2, 3, 4}, 4), new AwaitingSink());
            clock.advance(Duration.ofMillis(250));
            assertThat(status.reportLoadIfChanged(HEARTBEAT_MS)).as("a request waits now").isTrue();
            assertThat(((WorkerLoad) sent.history().get(1).value()).getWaiting()).isEqualTo(1);

            clock.advance(Duration.ofMillis(999));
            assertThat(status.reportLoadIfChanged(HEARTBEAT_MS)).as("steady, within the heartbeat").isFalse();
            clock.advance(Duration.ofMillis(1));
            assertThat(status.reportLoadIfChanged(HEARTBEAT_MS)).as("steady, a heartbeat since the last").isTrue();
            assertThat(sent.history()).hasSize(3);
            assertThat(((WorkerLoad) sent.history().get(2).value()).getTs()).isEqualTo(clock.millis());
        }
    }
}
