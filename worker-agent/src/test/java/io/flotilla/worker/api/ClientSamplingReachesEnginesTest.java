package io.flotilla.worker.api;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.openai.AwaitingSink;
import io.flotilla.worker.engine.openai.FakeVllmServer;
import io.flotilla.worker.engine.openai.OpenAiEngineSettings;
import io.flotilla.worker.engine.openai.OpenAiHttpEngine;
import io.flotilla.worker.engine.sglang.FakeSglangEngine;
import io.flotilla.worker.engine.sglang.SglangEngine;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the client set, and only that, reaches each engine kind's request body, with the client's decimal as written:
 * vLLM and SGLang apply the model's generation_config defaults to exactly the fields a request leaves out, so an
 * invented {@code "temperature": 1.0} overrode a model author's defaults, and a float on the way turned 0.7 into
 * 0.699999988079071. The check is on the JSON text the engine received, not a float comparison.
 */
class ClientSamplingReachesEnginesTest {

    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("m", "tok", "bf16/bs16/paged"), 16);
    /** Every optional sampling field's name in the engines' bodies. */
    private static final List<String> OPTIONAL = List.of("temperature", "top_p", "top_k", "min_p", "presence_penalty",
            "frequency_penalty", "repetition_penalty", "logit_bias", "seed", "sampling_seed", "ignore_eos");
    private static final SamplingParams SET = SamplingParams.newBuilder().setTemperature(0.3).setTopP(0.7).setTopK(7)
            .setMinP(0.05).setPresencePenalty(0.1).setFrequencyPenalty(-0.3).setRepetitionPenalty(1.1)
            .putLogitBias(17, 2.5).build();
    /** SET's fields as JSON text. */
    private static final Map<String, String> SET_AS_SENT = Map.of("temperature", "0.3", "top_p", "0.7", "top_k", "7",
            "min_p", "0.05", "presence_penalty", "0.1", "frequency_penalty", "-0.3", "repetition_penalty", "1.1",
            "logit_bias", "{\"17\":2.5}");

    private static GenerateRequest request(String id, SamplingParams sampling) {
        return GenerateRequest.newBuilder().setRequestId(id).addAllTokenIds(List.of(5, 6, 7, 8)).setSampling(sampling)
                .setStop(StopConditions.newBuilder().setMaxTokens(2)).build();
    }

    /** Submits the request through the worker's mapping and returns the body the engine received. */
    private static JsonNode sent(Engine engine, GenerateRequest request, Function<Integer, JsonNode> lastBody) {
        AwaitingSink sink = new AwaitingSink();
        engine.submit(EngineRequests.of(request), sink);
        sink.await();
        return lastBody.apply(0);
    }

    private static void check(Engine engine, Function<Integer, JsonNode> lastBody) {
        JsonNode unset = sent(engine, request("unset", SamplingParams.getDefaultInstance()), lastBody);
        for (String field : OPTIONAL) {
            assertThat(unset.has(field)).as("%s the client did not send, in %s", field, unset).isFalse();
        }
        JsonNode set = sent(engine, request("set", SET), lastBody);
        SET_AS_SENT.forEach((field, text) ->
                assertThat(set.path(field).toString()).as("%s as the client wrote it", field).isEqualTo(text));
    }

    @Test
    void vllmsCompletionsBodyCarriesExactlyTheClientsFields() throws Exception {
        try (FakeVllmServer server = new FakeVllmServer()) {
            OpenAiHttpEngine engine = OpenAiHttpEngine.start(OpenAiEngineSettings.of(server.url(), "m"), HASHER,
                    Clock.systemUTC(), EngineListeners.NONE, "vllm-test");
            try {
                check(engine, ignored -> server.lastRequest());
            } finally {
                engine.close();
            }
        }
    }

    @Test
    void sglangsNativeSamplingParamsCarryExactlyTheClientsFields() throws Exception {
        try (FakeSglangEngine fake = FakeSglangEngine.start(16, 7)) {
            SglangEngine engine = SglangEngine.start(OpenAiEngineSettings.of(fake.url(), "fake/model")
                            .withKvEvents(fake.kvEvents(), fake.kvEventsReplay(), "kv-events")
                            .withScrapeInterval(Duration.ofMillis(50)),
                    "/get_server_info", HASHER, Clock.systemUTC(), EngineListeners.NONE, "sglang-test");
            try {
                check(engine, ignored -> fake.requests().get(fake.requests().size() - 1).path("sampling_params"));
            } finally {
                engine.close();
            }
        }
    }
}
