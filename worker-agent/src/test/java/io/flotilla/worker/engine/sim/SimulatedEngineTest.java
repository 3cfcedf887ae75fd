package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.ResidentBlocks;
import io.flotilla.worker.engine.TokenSink;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.flotilla.worker.engine.sim.SimTesting.prompt;
import static io.flotilla.worker.engine.sim.SimTesting.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class SimulatedEngineTest {

    private final ManualClock clock = new ManualClock();
    private final KvEventReplay replay = new KvEventReplay();

    private SimulatedEngine engine(SimEngineConfig config) {
        return new SimulatedEngine(config, clock, clock, EngineListeners.kvEvents(replay));
    }

    @Test
    void stepsRunBackToBackInSimulatedTime() throws InterruptedException {
        try (SimulatedEngine engine = engine(SimTesting.small().speedup(2).build())) {
            RecordingSink sink = new RecordingSink();
            engine.submit(request("a", prompt(20, 1), 3), sink);

            assertThat(engine.runUntilIdle(100)).isEqualTo(3);

            assertThat(sink.tokens).hasSize(3);
            TimingModel t = TimingModel.DEFAULT;
            double expectedMs = (t.prefillMs(20) + 2 * t.decodeMs(6.0 / 64)) / 2;
            assertThat(clock.elapsed().toNanos() / 1e6).isCloseTo(expectedMs, within(1e-5));
            assertThat(engine.runOnce()).isFalse();
        }
    }

    @Test
    void residentSnapshotAgreesWithTheEventsDeliveredSoFar() throws InterruptedException {
        try (SimulatedEngine engine = engine(SimTesting.small().build())) {
            engine.submit(request("a", prompt(18, 1), 4), new RecordingSink());
            engine.submit(request("b", prompt(9, 2), 4), new RecordingSink());
            engine.runOnce();

            ResidentBlocks mid = engine.residentBlocks();
            assertThat(mid.position()).isEqualTo(replay.position).isPositive();
            assertThat(KvEventReplay.asSet(mid.seqHashes())).isEqualTo(replay.resident);

            engine.runUntilIdle(100);
            int resident = engine.residentBlocks().count();
            assertThat(engine.clearCache()).isEqualTo(resident);

            ResidentBlocks after = engine.residentBlocks();
            assertThat(after.count()).isZero();
            assertThat(after.position()).isEqualTo(replay.position);
            assertThat(replay.events.get(replay.events.size() - 1).hasCleared()).isTrue();
            assertThat(replay.resident).isEmpty();
            assertThat(replay.violations).isEmpty();
        }
    }

    @Test
    void callbacksRunAfterTheEngineLockIsReleased() throws Exception {
        try (SimulatedEngine engine = engine(SimTesting.small().build())) {
            List<Integer> activeSeenFromAnotherThread = new ArrayList<>();
            RecordingSink tokens = new RecordingSink() {
                @Override
                public void onTokens(int[] out) {
                    super.onTokens(out);
                    try {
                        // the engine is free while its sink runs: another thread reads it at once
                        activeSeenFromAnotherThread.add(CompletableFuture.supplyAsync(() -> engine.load().running())
                                .get(5, TimeUnit.SECONDS));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            };
            engine.submit(request("a", prompt(20, 1), 3), tokens);
            engine.runUntilIdle(100);
            assertThat(tokens.tokens).hasSize(3);
            assertThat(tokens.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
            assertThat(activeSeenFromAnotherThread).hasSize(3);
            assertThat(replay.violations).isEmpty();
        }
    }

    @Test
    void aSinkThatThrowsGetsNothingMoreAndItsRequestIsCancelled() throws InterruptedException {
        try (SimulatedEngine engine = engine(SimTesting.small().build())) {
            RecordingSink broken = new RecordingSink() {
                @Override
                public void onTokens(int[] out) {
                    super.onTokens(out);
                    throw new IllegalStateException("stream closed");
                }
            };
            engine.submit(request("a", prompt(20, 1), 50), broken);
            engine.runUntilIdle(100);
            assertThat(broken.tokens).as("nothing after the sink threw").hasSize(1);
            assertThat(broken.done()).isFalse();
            assertThat(broken.error).isNull();
            assertThat(engine.load().running()).isZero();
            assertThat(engine.load().activeKvBlocks()).as("its blocks were released").isZero();
        }
    }

    @Test
    void drainCompletesWhenInFlightWorkIsDone() throws InterruptedException {
        try (SimulatedEngine engine = engine(SimTesting.small().build())) {
            RecordingSink sink = new RecordingSink();
            engine.submit(request("a", prompt(6, 1), 5), sink);
            engine.runOnce();

            CompletableFuture<Void> drained = engine.drain();

            assertThat(drained).isNotDone();
            assertThatThrownBy(() -> engine.submit(request("b", prompt(4, 2), 1), new RecordingSink()))
                    .isInstanceOf(EngineUnavailableException.class);
            engine.runUntilIdle(100);
            assertThat(drained).isCompleted();
            assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
            assertThat(engine.load().inFlight()).isZero();
        }
    }

    @Test
    void drainOfAnIdleEngineCompletesAtOnce() {
        try (SimulatedEngine engine = engine(SimTesting.small().build())) {
            assertThat(engine.drain()).isCompleted();
        }
    }

    @Test
    void cancelThroughTheEngineFreesBlocksAndCompletesADrain() throws InterruptedException {
        try (SimulatedEngine engine = engine(SimTesting.small().build())) {
            RecordingSink sink = new RecordingSink();
            RequestHandle handle = engine.submit(request("a", prompt(10, 1), 50), sink);
            engine.runOnce();
            CompletableFuture<Void> drained = engine.drain();

            handle.cancel();

            assertThat(engine.load().activeKvBlocks()).isZero();
            assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_CANCELLED);
            assertThat(drained).isCompleted();
        }
    }

    @Test
    void closeFailsInFlightRequestsAndRejectsNewOnes() throws InterruptedException {
        SimulatedEngine engine = engine(SimTesting.small().build());
        RecordingSink running = new RecordingSink();
        RecordingSink waiting = new RecordingSink();
        engine.submit(request("a", prompt(10, 1), 50), running);
        engine.runOnce();
        engine.submit(request("b", prompt(10, 2), 50), waiting);

        engine.close();

        assertThat(running.error).isInstanceOf(EngineUnavailableException.class);
        assertThat(waiting.error).isInstanceOf(EngineUnavailableException.class);
        assertThatThrownBy(() -> engine.submit(request("c", prompt(4, 3), 1), new RecordingSink()))
                .isInstanceOf(EngineUnavailableException.class);
        engine.close(); // idempotent
    }

    @Test
    void residentBlockPayloadsVerifyAndACorruptedCopyIsDetected() throws InterruptedException {
        SimEngineConfig config = SimTesting.small().kvBytesPerBlock(512).build();
        try (SimulatedEngine engine = engine(config)) {
            engine.submit(request("a", prompt(16, 1), 1), new RecordingSink());
            engine.runUntilIdle(10);
            String layout = config.namespace().kvLayout();

            long[] resident = engine.residentBlocks().seqHashes();
            assertThat(resident).hasSize(4);
            for (long h : resident) {
                ByteBuffer copy = ByteBuffer.allocate(512);
                assertThat(engine.readBlock(h, copy)).isTrue();
                assertThat(KvPattern.verify(copy.flip(), h, layout)).isTrue();
            }

            ByteBuffer copy = ByteBuffer.allocate(512);
            engine.readBlock(resident[0], copy);
            copy.put(300, (byte) (copy.get(300) ^ 0x40));
            assertThat(KvPattern.firstMismatch(copy.flip(), resident[0], KvPattern.layoutSeed(layout))).isEqualTo(300);
            assertThat(engine.readBlock(12345L, ByteBuffer.allocate(512))).isFalse();
        }
    }

    @Test
    void theDriverThreadServesRequestsInRealTime() throws Exception {
        SimEngineConfig config = SimTesting.small().speedup(1000).build();
        try (SimulatedEngine engine = SimulatedEngine.startRealTime(config, EngineListeners.NONE, "sim-engine-test")) {
            List<CompletableFuture<Integer>> done = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                CompletableFuture<Integer> f = new CompletableFuture<>();
                done.add(f);
                engine.submit(EngineRequest.of("r" + i, prompt(20, i), 10), new TokenSink() {
                    @Override
                    public void onTokens(int[] tokens) {
                    }

                    @Override
                    public void onFinish(FinishReason reason, int prompt, int cached, int completion) {
                        f.complete(completion);
                    }

                    @Override
                    public void onError(Throwable error) {
                        f.completeExceptionally(error);
                    }
                });
            }
            for (CompletableFuture<Integer> f : done) {
                assertThat(f.get(30, TimeUnit.SECONDS)).isEqualTo(10);
            }
            assertThat(engine.drain().get(30, TimeUnit.SECONDS)).isNull();
            assertThatThrownBy(engine::runOnce).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void manualClockMovesOnlyWhenTold() {
        ManualClock c = new ManualClock();
        long start = c.millis();
        c.advance(Duration.ofMillis(5));
        c.sleepNanos(2_000_000);
        assertThat(c.millis() - start).isEqualTo(7);
        assertThatThrownBy(() -> c.advance(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
    }
}
