package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.SamplingFeature;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.SamplingOptions;
import io.flotilla.worker.engine.TokenLogprob;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Map;

import static io.flotilla.worker.engine.sim.SimTesting.prompt;
import static io.flotilla.worker.engine.sim.SimTesting.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** Each sampling parameter changes the simulated engine's output as its definition says. */
class SamplingParametersTest {

    private static final int[] PROMPT = prompt(9, 3);

    private static EngineRequest sampled(long seed, SamplingOptions options) {
        return EngineRequest.of("r", PROMPT, 24).withSeed(seed).withTemperature(1.0).withOptions(options);
    }

    private static SamplingOptions options(double topP, int topK, double minP) {
        return new SamplingOptions(topP, topK, minP, null, null, null, Map.of(), false, 0, null, List.of());
    }

    private static SamplingOptions penalties(double presence, double frequency, double repetition) {
        return new SamplingOptions(null, null, null, presence, frequency, repetition, Map.of(), false, 0, null, List.of());
    }

    private static SamplingOptions logprobs(int top) {
        return new SamplingOptions(null, null, null, null, null, null, Map.of(), true, top, null, List.of());
    }

    private static List<Integer> greedy() {
        return run(EngineRequest.of("g", PROMPT, 24)).tokens;
    }

    @Test
    void truncationToTheMostLikelyTokenIsGreedy() {
        for (long seed = 1; seed <= 3; seed++) {
            assertThat(run(sampled(seed, options(1, 1, 0))).tokens).as("top_k 1").isEqualTo(greedy());
            assertThat(run(sampled(seed, options(0.01, 0, 0))).tokens).as("top_p 0.01").isEqualTo(greedy());
            assertThat(run(sampled(seed, options(1, 0, 1))).tokens).as("min_p 1").isEqualTo(greedy());
        }
        assertThat(run(sampled(1, SamplingOptions.DEFAULT)).tokens).as("plain sampling is not greedy").isNotEqualTo(greedy());
    }

    @Test
    void truncationThatKeepsEverythingSamplesLikePlainSampling() {
        for (long seed = 1; seed <= 5; seed++) {
            assertThat(run(sampled(seed, options(1, TokenSampler.CANDIDATES, 0))).tokens)
                    .as("top_k = K goes through the processed path, same distribution, same draws")
                    .isEqualTo(run(sampled(seed, SamplingOptions.DEFAULT)).tokens);
        }
    }

    @Test
    void topPKeepsOnlyTheNucleus() {
        // p_j = r^j (1-r)/(1-r^32), r = e^-0.35 at temperature 1: the top two hold 50.4 %, the top three 65.7 %.
        java.util.Set<Integer> ranks = new HashSet<>();
        for (long seed = 1; seed <= 10; seed++) {
            RecordingSink sink = run(sampled(seed, new SamplingOptions(0.6, null, null, null, null, null, Map.of(), true, 3, null, List.of())));
            for (int i = 0; i < sink.tokens.size(); i++) {
                int rank = java.util.Arrays.stream(sink.logprobs.get(i).topIds()).boxed().toList().indexOf(sink.tokens.get(i));
                assertThat(rank).as("token %d of seed %d is in the nucleus of the three most likely", i, seed).isBetween(0, 2);
                ranks.add(rank);
            }
        }
        assertThat(ranks).containsExactlyInAnyOrder(0, 1, 2);
    }

    @Test
    void logitBiasForcesAndBansTokens() {
        int forced = 4242;
        EngineRequest biased = sampled(3, new SamplingOptions(null, null, null, null, null, null, Map.of(forced, 100.0), false, 0, null, List.of()));
        assertThat(run(biased).tokens).as("+100 makes a token outside the synthetic support certain").containsOnly(forced);

        int first = greedy().get(0);
        EngineRequest banned = EngineRequest.of("g", PROMPT, 24).withOptions(
                new SamplingOptions(null, null, null, null, null, null, Map.of(first, -100.0), false, 0, null, List.of()));
        assertThat(run(banned).tokens.get(0)).isNotEqualTo(first);
        assertThat(run(banned).tokens).doesNotContain(first);
    }

    @Test
    void penaltiesStopRepetition() {
        // Eight tokens, all of them candidates at every position: greedy output repeats at once.
        SimEngineConfig tiny = SimTesting.small().vocabSize(8).eosTokenId(7).build();
        int[] p = {1, 2, 3};
        EngineRequest greedy = EngineRequest.of("t", p, 7).withStop(null, true);
        assertThat(new HashSet<>(run(tiny, greedy).tokens)).as("greedy repeats").hasSizeLessThan(7);

        assertThat(new HashSet<>(run(tiny, greedy.withOptions(penalties(50, 0, 1))).tokens))
                .as("presence penalty: each token at most once").hasSize(7);
        assertThat(new HashSet<>(run(tiny, greedy.withOptions(penalties(0, 50, 1))).tokens))
                .as("frequency penalty").hasSize(7);
        List<Integer> repetition = run(tiny, greedy.withOptions(penalties(0, 0, 100)).withStop(null, true)).tokens;
        assertThat(repetition.subList(0, 4)).as("repetition penalty avoids prompt tokens first")
                .doesNotContain(1, 2, 3).doesNotHaveDuplicates();
    }

    @Test
    void logprobsAreThoseOfTheSampledDistribution() {
        RecordingSink sink = run(sampled(5, logprobs(5)));
        assertThat(sink.logprobs).hasSameSizeAs(sink.tokens);
        for (int i = 0; i < sink.tokens.size(); i++) {
            TokenLogprob lp = sink.logprobs.get(i);
            assertThat(lp.logprob()).isLessThanOrEqualTo(0f);
            assertThat(lp.topIds()).hasSize(5).doesNotHaveDuplicates();
            for (int k = 1; k < 5; k++) {
                assertThat(lp.topLogprobs()[k]).isLessThan(lp.topLogprobs()[k - 1]);
            }
            assertThat(lp.topLogprobs()[0]).as("p(most likely) at temperature 1")
                    .isCloseTo((float) Math.log((1 - Math.exp(-0.35)) / (1 - Math.exp(-0.35 * 32))), within(1e-4f));
        }
        assertThat(run(sampled(5, logprobs(5))).tokens).as("asking for logprobs changes nothing sampled")
                .isEqualTo(run(sampled(5, SamplingOptions.DEFAULT)).tokens);

        // The processed path reports the same distribution when it is not reshaped.
        RecordingSink viaProcessed = run(sampled(5, new SamplingOptions(null, TokenSampler.CANDIDATES, null, null, null, null, Map.of(),
                true, 5, null, List.of())));
        for (int i = 0; i < sink.tokens.size(); i++) {
            assertThat(viaProcessed.logprobs.get(i).logprob()).isCloseTo(sink.logprobs.get(i).logprob(), within(1e-4f));
            assertThat(viaProcessed.logprobs.get(i).topIds()).containsExactly(sink.logprobs.get(i).topIds());
        }

        // Over a whole (tiny) vocabulary the probabilities add up to one.
        SimEngineConfig tiny = SimTesting.small().vocabSize(8).eosTokenId(7).build();
        RecordingSink all = run(tiny, EngineRequest.of("t", new int[] {1}, 3).withSeed(1L).withTemperature(0.7)
                .withStop(null, true).withOptions(logprobs(8)));
        for (TokenLogprob lp : all.logprobs) {
            double sum = 0;
            for (float v : lp.topLogprobs()) {
                sum += Math.exp(v);
            }
            assertThat(sum).isCloseTo(1.0, within(1e-4));
        }
    }

    @Test
    void greedyLogprobsNameTheChosenTokenFirst() {
        RecordingSink sink = run(EngineRequest.of("g", PROMPT, 10).withOptions(logprobs(3)));
        for (int i = 0; i < sink.tokens.size(); i++) {
            assertThat(sink.logprobs.get(i).topIds()[0]).isEqualTo(sink.tokens.get(i));
            assertThat(sink.logprobs.get(i).topLogprobs()[0]).isEqualTo(sink.logprobs.get(i).logprob());
        }
    }

    @Test
    void capabilitiesNameEverySamplingFeatureAndJsonOnlyWithCl100k() {
        assertThat(new Scheduler(SimTesting.small().build(), (p, e) -> { }).capabilities().getFeaturesList())
                .contains(SamplingFeature.SAMPLING_FEATURE_TOP_P, SamplingFeature.SAMPLING_FEATURE_LOGPROBS,
                        SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA);
        SimEngineConfig other = SimTesting.small().vocabSize(300).eosTokenId(299).build();
        assertThat(new Scheduler(other, (p, e) -> { }).capabilities().getFeaturesList())
                .contains(SamplingFeature.SAMPLING_FEATURE_TOP_K)
                .doesNotContain(SamplingFeature.SAMPLING_FEATURE_JSON_OBJECT, SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA);
        Scheduler s = new Scheduler(other, (p, e) -> { });
        EngineRequest json = EngineRequest.of("j", new int[] {1, 2}, 8).withOptions(new SamplingOptions(null, null, null, null, null, null,
                Map.of(), false, 0, new SamplingOptions.OutputFormat(SamplingOptions.OutputFormat.Kind.JSON_OBJECT, null, null),
                List.of()));
        assertThatThrownBy(() -> s.submit(json, new RecordingSink())).isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("structured output");
    }

    @Test
    void outOfRangeValuesAreRefused() {
        Scheduler s = new Scheduler(SimTesting.small().build(), (p, e) -> { });
        assertThatThrownBy(() -> s.submit(sampled(1, new SamplingOptions(null, null, null, null, null, null, Map.of(200_000, 1.0), false, 0,
                null, List.of())), new RecordingSink())).isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("logit_bias");
        assertThatThrownBy(() -> s.submit(sampled(1, logprobs(21)), new RecordingSink()))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("top_logprobs");
    }
}
