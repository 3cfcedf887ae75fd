package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.DeadlineExceededException;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.RequestHandle;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;

import static io.flotilla.worker.engine.sim.SimTesting.prompt;
import static io.flotilla.worker.engine.sim.SimTesting.request;
import static io.flotilla.worker.engine.sim.SimTesting.runUntilIdle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SchedulerTest {

    private final KvEventReplay replay = new KvEventReplay();

    private Scheduler scheduler(SimEngineConfig config) {
        return new Scheduler(config, replay);
    }

    private void assertConsistent(Scheduler s) {
        s.pool().verifyInvariants();
        assertThat(replay.violations).isEmpty();
        assertThat(replay.resident).isEqualTo(KvEventReplay.asSet(s.residentBlocks().seqHashes()));
        assertThat(s.residentBlocks().position()).isEqualTo(replay.position);
    }

    @Test
    void aRepeatedPromptReportsItsResidentFullBlocksAsCached() {
        Scheduler s = scheduler(SimTesting.small().build());
        RecordingSink first = new RecordingSink();
        RecordingSink second = new RecordingSink();
        int[] p = prompt(10, 1); // two full blocks of 4 and two tokens

        s.submit(request("a", p, 3), first);
        runUntilIdle(s, 20);
        s.submit(request("b", p, 3), second);
        StepReport admitted = s.step(0);
        runUntilIdle(s, 20);

        assertThat(first.cachedTokens).isZero();
        assertThat(second.cachedTokens).isEqualTo(8);
        assertThat(second.promptTokens).isEqualTo(10);
        assertThat(admitted.plan().prefillTokens()).isEqualTo(2);
        assertThat(second.tokens).isEqualTo(first.tokens);
        assertConsistent(s);
    }

    @Test
    void aBlockAlignedRepeatedPromptStillComputesItsLastBlock() {
        Scheduler s = scheduler(SimTesting.small().build());
        RecordingSink second = new RecordingSink();
        int[] p = prompt(8, 1);

        s.submit(request("a", p, 1), new RecordingSink());
        runUntilIdle(s, 20);
        s.submit(request("b", p, 1), second);
        runUntilIdle(s, 20);

        assertThat(second.cachedTokens).isEqualTo(4);
        assertThat(replay.storedInOrder()).hasSize(2); // the recomputed last block is shared, not stored again
        assertConsistent(s);
    }

    @Test
    void evictionRemovesTheLeastRecentlyUsedBlocksFirstTailBeforePrefix() {
        SimEngineConfig config = SimTesting.small().totalBlocks(6).build();
        Scheduler s = scheduler(config);
        int[] a = prompt(9, 1);
        int[] b = prompt(9, 2);
        long[] aHashes = SimTesting.seqHashes(config, a);
        long[] bHashes = SimTesting.seqHashes(config, b);

        s.submit(request("a", a, 1), new RecordingSink());
        runUntilIdle(s, 10);
        s.submit(request("b", b, 1), new RecordingSink());
        runUntilIdle(s, 10);
        assertThat(replay.removedInOrder()).isEmpty();

        s.submit(request("c", prompt(17, 3), 1), new RecordingSink()); // 5 blocks: 2 free + 3 evicted
        runUntilIdle(s, 10);

        assertThat(replay.removedInOrder()).containsExactly(aHashes[1], aHashes[0], bHashes[1]);
        assertConsistent(s);
    }

    @Test
    void whenBlocksRunOutTheYoungestIsPreemptedAndRecomputedWithTheSameOutput() {
        SimEngineConfig config = SimTesting.small().totalBlocks(8).build();
        RecordingSink aloneSink = new RecordingSink();
        Scheduler alone = new Scheduler(config, (p, e) -> { });
        alone.submit(request("b", prompt(8, 2), 16), aloneSink);
        runUntilIdle(alone, 100);

        Scheduler s = scheduler(config);
        RecordingSink a = new RecordingSink();
        RecordingSink b = new RecordingSink();
        s.submit(request("a", prompt(8, 1), 16), a);
        s.submit(request("b", prompt(8, 2), 16), b);
        List<StepReport> reports = runUntilIdle(s, 200);

        List<String> preempted = reports.stream().flatMap(r -> r.plan().preempted().stream()).toList();
        assertThat(preempted).isNotEmpty().containsOnly("b");
        StepReport readmit = reports.stream().filter(r -> r.plan().admitted().contains("b")).skip(1).findFirst()
                .orElseThrow();
        assertThat(readmit.plan().work()).anySatisfy(w -> {
            assertThat(w.requestId()).isEqualTo("b");
            assertThat(w.prefill()).isTrue();
        });
        assertThat(a.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(b.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(a.completionTokens).isEqualTo(16);
        assertThat(b.tokens).isEqualTo(aloneSink.tokens);
        assertThat(b.cachedTokens).isZero(); // reported from the first admission only
        assertConsistent(s);
    }

    @Test
    void chunkedPrefillNeverStarvesRunningDecodes() {
        Scheduler s = scheduler(SimTesting.small().maxBatchTokens(16).build());
        RecordingSink decoder = new RecordingSink();
        s.submit(request("decoder", prompt(4, 1), 30), decoder);
        s.step(0); // prefill, first token
        s.submit(request("long", prompt(100, 2), 1), new RecordingSink());

        int prefillSteps = 0;
        while (decoder.finishReason == null) {
            StepReport r = s.step(0);
            List<StepPlan.Work> work = r.plan().work();
            assertThat(work.get(0)).isEqualTo(new StepPlan.Work("decoder", 1, false));
            assertThat(r.sampled()).contains("decoder");
            if (work.size() > 1) {
                prefillSteps++;
                assertThat(work.get(1).requestId()).isEqualTo("long");
                assertThat(work.get(1).tokens()).isLessThanOrEqualTo(15);
            }
        }
        assertThat(prefillSteps).isEqualTo(7); // ceil(100 / 15)
        assertThat(decoder.completionTokens).isEqualTo(30);
        runUntilIdle(s, 10);
        assertConsistent(s);
    }

    @Test
    void cancelReleasesBlocksAtOnceAndKeepsFullOnesCached() {
        Scheduler s = scheduler(SimTesting.small().build());
        RecordingSink sink = new RecordingSink();
        RequestHandle handle = s.submit(request("a", prompt(10, 1), 50), sink);
        s.step(0);
        s.step(1);
        assertThat(s.pool().activeBlocks()).isEqualTo(3);

        handle.cancel();

        assertThat(s.pool().activeBlocks()).isZero();
        assertThat(s.pool().cachedBlocks()).isEqualTo(2);
        assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_CANCELLED);
        assertThat(sink.completionTokens).isEqualTo(2);
        assertThat(s.isIdle()).isTrue();
        handle.cancel(); // idempotent
        assertConsistent(s);
    }

    @Test
    void aWaitingRequestCanBeCancelledBeforeItRuns() {
        Scheduler s = scheduler(SimTesting.small().build());
        RecordingSink sink = new RecordingSink();
        s.submit(request("a", prompt(10, 1), 5), sink);

        assertThat(s.cancel("a")).isTrue();

        assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_CANCELLED);
        assertThat(sink.completionTokens).isZero();
        assertThat(s.cancel("a")).isFalse();
        assertThat(s.step(0).idle()).isTrue();
    }

    @Test
    void aCancelFromInsideASinkCallbackTakesEffectAfterTheStep() {
        Scheduler s = scheduler(SimTesting.small().build());
        RequestHandle[] handle = new RequestHandle[1];
        RecordingSink sink = new RecordingSink() {
            @Override
            public void onTokens(int[] out) {
                super.onTokens(out);
                handle[0].cancel();
            }
        };
        handle[0] = s.submit(request("a", prompt(10, 1), 5), sink);

        s.step(0);

        assertThat(sink.tokens).hasSize(1);
        assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_CANCELLED);
        assertThat(s.pool().activeBlocks()).isZero();
        assertConsistent(s);
    }

    @Test
    void aThrowingSinkIsTreatedAsAGoneClient() {
        Scheduler s = scheduler(SimTesting.small().build());
        s.submit(request("a", prompt(10, 1), 5), new RecordingSink() {
            @Override
            public void onTokens(int[] out) {
                throw new IllegalStateException("stream closed");
            }
        });

        s.step(0);

        assertThat(s.isIdle()).isTrue();
        assertThat(s.pool().activeBlocks()).isZero();
    }

    @Test
    void anExpiredDeadlineFailsTheRequestAndFreesItsBlocks() {
        Scheduler s = scheduler(SimTesting.small().build());
        RecordingSink sink = new RecordingSink();
        s.submit(request("a", prompt(10, 1), 50).withDeadline(Instant.ofEpochMilli(100)), sink);
        s.step(0);
        s.step(99);

        s.step(100);

        assertThat(sink.error).isInstanceOf(DeadlineExceededException.class);
        assertThat(sink.tokens).hasSize(2);
        assertThat(s.pool().activeBlocks()).isZero();
        assertThat(s.isIdle()).isTrue();
    }

    @Test
    void aFullWaitingQueueRejectsWithOverload() {
        Scheduler s = scheduler(SimTesting.small().maxWaiting(2).build());
        s.submit(request("a", prompt(4, 1), 1), new RecordingSink());
        s.submit(request("b", prompt(4, 2), 1), new RecordingSink());

        assertThatThrownBy(() -> s.submit(request("c", prompt(4, 3), 1), new RecordingSink()))
                .isInstanceOf(EngineOverloadedException.class).hasMessageContaining("2 requests");
    }

    @Test
    void drainingRejectsNewWorkAndFinishesInFlightWork() {
        Scheduler s = scheduler(SimTesting.small().build());
        RecordingSink sink = new RecordingSink();
        s.submit(request("a", prompt(6, 1), 4), sink);
        s.step(0);

        s.startDrain();

        assertThatThrownBy(() -> s.submit(request("b", prompt(4, 2), 1), new RecordingSink()))
                .isInstanceOf(EngineUnavailableException.class);
        runUntilIdle(s, 10);
        assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(s.isIdle()).isTrue();
    }

    @Test
    void concurrentIdenticalPromptsStoreEachBlockOnce() {
        Scheduler s = scheduler(SimTesting.small().build());
        int[] p = prompt(12, 1);
        s.submit(request("a", p, 2), new RecordingSink());
        s.submit(request("b", p, 2), new RecordingSink());

        runUntilIdle(s, 10);

        assertThat(replay.storedInOrder()).hasSize(3);
        assertConsistent(s);
    }

    @Test
    void generatedTokensBecomeStoredBlocksChainedToThePrompt() {
        SimEngineConfig config = SimTesting.small().build();
        Scheduler s = scheduler(config);
        RecordingSink sink = new RecordingSink();
        int[] p = prompt(4, 1);
        s.submit(request("a", p, 9), sink);

        runUntilIdle(s, 20);

        // 13 tokens, KV computed for the first 12 (the last sampled token is never fed back).
        int[] withKv = Arrays.copyOf(SimTesting.concat(p, sink.tokenArray()), 12);
        long[] expected = SimTesting.seqHashes(config, withKv);
        assertThat(replay.storedInOrder()).containsExactly(expected[0], expected[1], expected[2]);
        assertThat(replay.events).filteredOn(e -> e.hasStored())
                .allSatisfy(e -> assertThat(e.getStored().getTier())
                        .isEqualTo(io.flotilla.protocol.v1.KvTier.KV_TIER_DEVICE));
        assertConsistent(s);
    }

    @Test
    void stepDurationFollowsTheTimingModelDividedBySpeedup() {
        SimEngineConfig config = SimTesting.small().speedup(4).build();
        Scheduler s = scheduler(config);
        s.submit(request("a", prompt(40, 1), 3), new RecordingSink());

        StepReport prefill = s.step(0);
        StepReport decode = s.step(1);

        assertThat(prefill.stepMs()).isEqualTo(TimingModel.DEFAULT.prefillMs(40) / 4);
        assertThat(decode.stepMs()).isEqualTo(TimingModel.DEFAULT.decodeMs(11.0 / 64) / 4);
        assertThat(s.load().lastStepMs()).isEqualTo(decode.stepMs());
    }

    @Test
    void loadCountsQueuedPrefillWork() {
        Scheduler s = scheduler(SimTesting.small().maxBatchTokens(16).maxRunning(1).build());
        s.submit(request("a", prompt(40, 1), 3), new RecordingSink());
        s.submit(request("b", prompt(10, 2), 3), new RecordingSink());
        s.step(0);

        assertThat(s.load()).isEqualTo(new io.flotilla.worker.engine.EngineLoad(1, 1, 24 + 10, 4, 64,
                s.load().lastStepMs()));
    }

    @Test
    void aDuplicateInFlightIdIsInvalid() {
        Scheduler s = scheduler(SimTesting.small().build());
        s.submit(request("a", prompt(4, 1), 1), new RecordingSink());
        assertThatThrownBy(() -> s.submit(request("a", prompt(4, 2), 1), new RecordingSink()))
                .isInstanceOf(io.flotilla.worker.engine.InvalidRequestException.class)
                .hasMessageContaining("already in flight");
    }

    @Test
    void requestsOfTheSameIdMayFollowEachOther() {
        Scheduler s = scheduler(SimTesting.small().build());
        s.submit(request("a", prompt(4, 1), 1), new RecordingSink());
        runUntilIdle(s, 5);
        RecordingSink again = new RecordingSink();
        s.submit(EngineRequest.of("a", prompt(4, 1), 1), again);
        runUntilIdle(s, 5);
        assertThat(again.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
    }

    @Test
    void onlyOnePlanMayBeOutstanding() {
        Scheduler s = scheduler(SimTesting.small().build());
        s.submit(request("a", prompt(4, 1), 2), new RecordingSink());
        StepPlan plan = s.schedule(0);

        assertThatThrownBy(() -> s.schedule(1)).isInstanceOf(IllegalStateException.class);
        s.complete(plan);
        assertThatThrownBy(() -> s.complete(plan)).isInstanceOf(IllegalStateException.class);
    }
}
