package io.flotilla.worker.engine.sglang;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.SamplingOptions;
import io.flotilla.worker.engine.openai.AwaitingSink;
import io.flotilla.worker.engine.openai.OpenAiEngineSettings;
import io.flotilla.worker.engine.vllm.RecordingKvListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The SGLang adapter against a fake written from SGLang's wire formats (HTTP, SSE, ZMQ KV events). */
class SglangEngineTest {

    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("m", "tok", "bf16/bs16/paged"), 16);

    private final FakeSglangEngine fake = FakeSglangEngine.start(16, 7);
    private final RecordingKvListener listener = new RecordingKvListener();
    private final SglangEngine engine = SglangEngine.start(OpenAiEngineSettings.of(fake.url(), "fake/model")
            .withKvEvents(fake.kvEvents(), fake.kvEventsReplay(), "kv-events").withScrapeInterval(Duration.ofMillis(50)),
            "/get_server_info", HASHER, Clock.systemUTC(), EngineListeners.kvEvents(listener), "sglang-test");

    SglangEngineTest() throws IOException {
    }

    @AfterEach
    void close() {
        engine.close();
        fake.close();
    }

    private static int[] prompt(int n, int salt) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = 1000 + salt * 7 + i;
        }
        return p;
    }

    @ParameterizedTest(name = "incremental={0} skipTokenizer={1}")
    @CsvSource({"false,false", "true,false", "false,true", "true,true"})
    void relaysEveryTokenIdOnceWhateverTheStreamingMode(boolean incremental, boolean skipTokenizer) {
        fake.setIncremental(incremental);
        fake.setSkipTokenizer(skipTokenizer);
        AwaitingSink sink = new AwaitingSink();
        engine.submit(new EngineRequest("r-" + incremental + skipTokenizer, prompt(20, 1), 8, new int[]{7}, false, 0.5,
                42L, null), sink);
        AwaitingSink.End end = sink.await(Duration.ofSeconds(10));
        assertThat(sink.violations()).isEmpty();
        assertThat(sink.tokens()).containsExactly(101, 102, 103);
        assertThat(end.reason()).as("three tokens under a budget of 8: a stop").isEqualTo(FinishReason.FINISH_REASON_STOP);
        assertThat(end.promptTokens()).isEqualTo(20);
        assertThat(end.completionTokens()).isEqualTo(3);
    }

    @Test
    void sendsSglangsNativeRequestWithTheTokenPrompt() {
        AwaitingSink sink = new AwaitingSink();
        int[] p = prompt(5, 2);
        engine.submit(new EngineRequest("rid-native", p, 2, new int[]{9, 10}, true, 0.0, 7L, null), sink);
        AwaitingSink.End end = sink.await(Duration.ofSeconds(10));
        assertThat(end.reason()).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
        JsonNode req = fake.requests().get(fake.requests().size() - 1);
        assertThat(req.path("rid").asString()).isEqualTo("rid-native");
        assertThat(req.path("stream").asBoolean()).isTrue();
        assertThat(req.path("input_ids").toString()).isEqualTo(Arrays.toString(p).replace(" ", ""));
        JsonNode sp = req.path("sampling_params");
        assertThat(sp.path("max_new_tokens").asInt()).isEqualTo(2);
        assertThat(sp.path("stop_token_ids").toString()).isEqualTo("[9,10]");
        assertThat(sp.path("ignore_eos").asBoolean()).isTrue();
        assertThat(sp.path("sampling_seed").asLong()).isEqualTo(7);
        assertThat(sink.tokens()).containsExactly(101, 102);
    }

    @Test
    void sendsEverySamplingParameterItAdvertisesInSglangsNames() {
        AwaitingSink sink = new AwaitingSink();
        SamplingOptions options = new SamplingOptions(0.9, 40, 0.05, 0.5, -0.25, 1.1, java.util.Map.of(7, -100.0), false, 0,
                new SamplingOptions.OutputFormat(SamplingOptions.OutputFormat.Kind.JSON_SCHEMA, "{\"type\":\"object\"}", "s"),
                java.util.List.of("END"));
        engine.submit(new EngineRequest("rid-s", prompt(5, 3), 2, null, false, 0.7, null, null, options), sink);
        sink.await(Duration.ofSeconds(10));
        JsonNode sp = fake.requests().get(fake.requests().size() - 1).path("sampling_params");
        assertThat(sp.path("top_p").asDouble()).isEqualTo(0.9);
        assertThat(sp.path("top_k").asInt()).isEqualTo(40);
        assertThat(sp.path("min_p").asDouble()).isEqualTo(0.05);
        assertThat(sp.path("presence_penalty").asDouble()).isEqualTo(0.5);
        assertThat(sp.path("frequency_penalty").asDouble()).isEqualTo(-0.25);
        assertThat(sp.path("repetition_penalty").asDouble()).isCloseTo(1.1, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(sp.path("logit_bias").toString()).isEqualTo("{\"7\":-100.0}");
        assertThat(sp.path("json_schema").asString()).isEqualTo("{\"type\":\"object\"}");
        assertThat(sp.has("stop")).as("stop strings stay with the gateway").isFalse();
        assertThat(engine.capabilities().getFeaturesList())
                .doesNotContain(io.flotilla.protocol.v1.SamplingFeature.SAMPLING_FEATURE_LOGPROBS);
    }

    @Test
    void capacityIsTheServersTokenPoolInBlocks() {
        await().atMost(Duration.ofSeconds(10)).until(engine::healthy);
        assertThat(engine.reportedKvBlocks()).as("32,000 tokens / 16").isEqualTo(2000);
        assertThat(engine.load().totalKvBlocks()).isEqualTo(2000);
        assertThat(engine.load().activeKvBlocks()).as("token_usage 0.125").isEqualTo(250);
    }

    @Test
    void kvEventsOfCachedPagesBecomeTheWorkersSeqHashes() {
        fake.awaitSubscriber(Duration.ofSeconds(10));
        int[] p = prompt(40, 3);
        AwaitingSink sink = new AwaitingSink();
        engine.submit(new EngineRequest("kv-1", p, 3, new int[0], false, 0.0, null, null), sink);
        sink.await(Duration.ofSeconds(10));
        Set<Long> expected = new HashSet<>();
        for (long h : HASHER.seqHashes(p)) {
            expected.add(h);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> listener.resident().equals(expected));
        assertThat(listener.violations()).isEmpty();
        assertThat(engine.kvEventCounters().blockSizeMismatch()).isZero();
    }

    @Test
    void timingIsLearnedFromRequestsThatHadTheEngineToThemselves() {
        assertThat(engine.learnedTiming()).isEmpty();
        for (int i = 0; i < 10; i++) {
            AwaitingSink sink = new AwaitingSink();
            engine.submit(new EngineRequest("t-" + i, prompt(16 + 16 * i, 10 + i), 3, new int[0], false, 0.0, null, null), sink);
            sink.await(Duration.ofSeconds(10));
            await().atMost(Duration.ofSeconds(5)).until(() -> engine.inFlight() == 0); // the next one has the engine alone
        }
        assertThat(engine.timingSamples()).containsExactly(10, 10);
        assertThat(engine.learnedTiming()).hasValueSatisfying(t -> {
            assertThat(t.prefillSamples()).isEqualTo(10);
            assertThat(t.decodeSamples()).isEqualTo(10);
            assertThat(t.prefillB()).isGreaterThanOrEqualTo(0);
            assertThat(t.decodeD0()).isGreaterThanOrEqualTo(0);
        });
    }
}
