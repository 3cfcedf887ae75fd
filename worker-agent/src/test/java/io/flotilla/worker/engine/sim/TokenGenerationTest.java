package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.EngineRequest;
import org.junit.jupiter.api.Test;

import static io.flotilla.worker.engine.sim.SimTesting.prompt;
import static io.flotilla.worker.engine.sim.SimTesting.runUntilIdle;
import static org.assertj.core.api.Assertions.assertThat;

class TokenGenerationTest {

    private static RecordingSink run(SimEngineConfig config, EngineRequest request) {
        Scheduler s = new Scheduler(config, (p, e) -> { });
        RecordingSink sink = new RecordingSink();
        s.submit(request, sink);
        runUntilIdle(s, 1000);
        return sink;
    }

    private static RecordingSink run(EngineRequest request) {
        return run(SimTesting.small().build(), request);
    }

    @Test
    void theSameSeedGivesTheSameTokensOnAnyEngineForAnyRequestId() {
        RecordingSink a = run(EngineRequest.of("a", prompt(5, 1), 20).withSeed(99L).withTemperature(0.8));
        RecordingSink b = run(SimTesting.small().totalBlocks(128).maxBatchTokens(8).build(),
                EngineRequest.of("b", prompt(5, 1), 20).withSeed(99L).withTemperature(0.8));
        RecordingSink c = run(EngineRequest.of("a", prompt(5, 1), 20).withSeed(100L).withTemperature(0.8));

        assertThat(a.tokens).hasSize(20).isEqualTo(b.tokens);
        assertThat(c.tokens).isNotEqualTo(a.tokens);
        assertThat(a.tokens).allSatisfy(t -> assertThat(t).isBetween(0, SimEngineConfig.DEFAULT_VOCAB_SIZE - 1));
    }

    @Test
    void withoutASeedSampledTokensFollowTheRequestIdAndGreedyTokensThePrompt() {
        EngineRequest sampled = EngineRequest.of("req-1", prompt(5, 1), 10).withTemperature(1.0);
        assertThat(run(sampled).tokens).isEqualTo(run(sampled).tokens);
        EngineRequest otherId = EngineRequest.of("req-2", prompt(5, 1), 10).withTemperature(1.0);
        assertThat(run(otherId).tokens).isNotEqualTo(run(sampled).tokens);

        EngineRequest greedy1 = EngineRequest.of("g-1", prompt(5, 1), 10);
        EngineRequest greedy2 = EngineRequest.of("g-2", prompt(5, 1), 10);
        EngineRequest greedyOther = EngineRequest.of("g-3", prompt(5, 2), 10);
        assertThat(run(greedy1).tokens).isEqualTo(run(greedy2).tokens).isNotEqualTo(run(greedyOther).tokens);
    }

    @Test
    void theEngineSeedSeparatesEngines() {
        EngineRequest r = EngineRequest.of("a", prompt(5, 1), 10).withSeed(1L);
        assertThat(run(SimTesting.small().seed(1).build(), r).tokens)
                .isNotEqualTo(run(SimTesting.small().seed(2).build(), r).tokens);
    }

    @Test
    void maxTokensEndsWithLength() {
        RecordingSink sink = run(EngineRequest.of("a", prompt(5, 1), 7).withSeed(3L));

        assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(sink.completionTokens).isEqualTo(7);
        assertThat(sink.tokens).hasSize(7);
        assertThat(sink.tokenCalls).isEqualTo(7);
    }

    @Test
    void aStopTokenEndsGenerationAtItsFirstOccurrenceAndIsReturned() {
        int[] free = run(EngineRequest.of("a", prompt(5, 1), 10).withSeed(3L)).tokenArray();
        int stop = free[4];

        RecordingSink sink = run(EngineRequest.of("a", prompt(5, 1), 10).withSeed(3L)
                .withStop(new int[] {stop}, false));

        int firstAt = sink.tokens.indexOf(stop);
        assertThat(firstAt).isBetween(0, 4);
        assertThat(sink.tokens).hasSize(firstAt + 1).containsExactly(java.util.Arrays.stream(free).limit(firstAt + 1)
                .boxed().toArray(Integer[]::new));
        assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_STOP);
        assertThat(sink.completionTokens).isEqualTo(firstAt + 1);
    }

    @Test
    void eosStopsUnlessIgnored() {
        // A tiny vocabulary makes eos frequent: token ids 0..7, eos 3.
        SimEngineConfig config = SimTesting.small().vocabSize(8).eosTokenId(3).build();
        int[] p = {1, 2, 4, 5, 6};

        RecordingSink ignoring = run(config, EngineRequest.of("a", p, 60).withSeed(5L).withStop(null, true));
        int firstEos = ignoring.tokens.indexOf(3);
        assertThat(firstEos).as("seed 5 samples eos within 60 tokens").isBetween(0, 58);
        assertThat(ignoring.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        assertThat(ignoring.tokens).hasSize(60);

        RecordingSink stopping = run(config, EngineRequest.of("a", p, 60).withSeed(5L));
        assertThat(stopping.finishReason).isEqualTo(FinishReason.FINISH_REASON_STOP);
        assertThat(stopping.tokens).isEqualTo(ignoring.tokens.subList(0, firstEos + 1));

        RecordingSink listedButIgnored = run(config,
                EngineRequest.of("a", p, 60).withSeed(5L).withStop(new int[] {3}, true));
        assertThat(listedButIgnored.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
    }

    @Test
    void tokenStreamIsPinned() {
        // Pins the sampler so a change that alters every simulated output is a visible decision.
        long seed = TokenSampler.streamSeed(EngineRequest.of("x", new int[] {1}, 1).withSeed(0L), 0);
        assertThat(seed).isEqualTo(KvPattern.mix(KvPattern.mix(0)));
        assertThat(run(SimEngineConfig.builder().kvBytesPerBlock(0).build(),
                EngineRequest.of("x", new int[] {1, 2, 3}, 6).withSeed(0L).withTemperature(1.0)).tokens)
                .containsExactly(PINNED_SAMPLED);
        assertThat(run(SimEngineConfig.builder().kvBytesPerBlock(0).build(), EngineRequest.of("x", new int[] {1, 2, 3}, 6)).tokens)
                .containsExactly(PINNED_GREEDY);
    }

    private static final Integer[] PINNED_SAMPLED = {30456, 93561, 4786, 528, 23468, 35220};
    private static final Integer[] PINNED_GREEDY = {34286, 60159, 4786, 34131, 23468, 34446};
}
