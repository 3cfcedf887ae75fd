package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.DeadlineExceededException;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.RemotePrefill;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.SamplingOptions;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Scope;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The HTTP adapter in front of a wire-faithful fake vLLM server. */
class OpenAiHttpEngineTest {

    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("m", "tok", "bf16/bs16/paged"), 16);
    private static final int[] PROMPT = {5, 6, 7, 8, 9};

    private final FakeVllmServer server = new FakeVllmServer();
    private OpenAiHttpEngine engine = start(OpenAiEngineSettings.of(server.url(), "served-model"));

    OpenAiHttpEngineTest() throws IOException {
    }

    private static OpenAiHttpEngine start(OpenAiEngineSettings settings) {
        return OpenAiHttpEngine.start(settings, HASHER, Clock.systemUTC(), EngineListeners.NONE, "test-engine");
    }

    @AfterEach
    void close() {
        engine.close();
        server.close();
    }

    @Test
    void forwardsTheTokenPromptAndSamplingParameters() {
        EngineRequest r = new EngineRequest("req-1", PROMPT, 7, new int[]{42, 43}, true, 0.7, 1234L, null);
        AwaitingSink sink = new AwaitingSink();
        engine.submit(r, sink);
        sink.await();

        JsonNode body = server.lastRequest();
        assertThat(body.path("model").asString()).isEqualTo("served-model");
        assertThat(body.path("prompt").toString()).isEqualTo("[5,6,7,8,9]");
        assertThat(body.path("max_tokens").asInt()).isEqualTo(7);
        assertThat(body.path("temperature").asDouble()).isEqualTo(0.7);
        assertThat(body.path("seed").asLong()).isEqualTo(1234L);
        assertThat(body.path("stop_token_ids").toString()).isEqualTo("[42,43]");
        assertThat(body.path("ignore_eos").asBoolean()).isTrue();
        assertThat(body.path("stream").asBoolean()).isTrue();
        assertThat(body.path("stream_options").path("include_usage").asBoolean()).isTrue();
        assertThat(body.path("return_token_ids").asBoolean()).isTrue();
        assertThat(body.has("kv_transfer_params")).isFalse();
        assertThat(server.requestIds).containsExactly("req-1");
    }

    @Test
    void carriesTheSubmittingThreadsTraceContextAsTraceparent() {
        String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        String spanId = "00f067aa0ba902b7";
        Span span = Span.wrap(SpanContext.create(traceId, spanId, TraceFlags.getSampled(), TraceState.getDefault()));
        AwaitingSink traced = new AwaitingSink();
        try (Scope ignored = span.makeCurrent()) {
            engine.submit(EngineRequest.of("req-t", PROMPT, 2), traced);
        }
        traced.await();
        AwaitingSink untraced = new AwaitingSink();
        engine.submit(EngineRequest.of("req-u", PROMPT, 2), untraced);
        untraced.await();

        assertThat(server.traceparents).as("the span current at submit, then nothing when none is")
                .containsExactly("00-" + traceId + "-" + spanId + "-01", "");
    }

    @Test
    void sendsEverySamplingParameterInTheBodyVllmAndSglangRead() {
        SamplingOptions options = new SamplingOptions(0.9, 40, 0.05, 0.5, -0.25, 1.1, java.util.Map.of(50256, -100.0), true, 3,
                new SamplingOptions.OutputFormat(SamplingOptions.OutputFormat.Kind.JSON_SCHEMA, "{\"type\":\"object\"}", "reply"),
                java.util.List.of("\n\n", "END"));
        AwaitingSink sink = new AwaitingSink();
        engine.submit(new EngineRequest("req-s", PROMPT, 3, null, false, 0.7, 9L, null, options), sink);
        sink.await();

        JsonNode body = server.lastRequest();
        assertThat(body.path("top_p").asDouble()).isEqualTo(0.9);
        assertThat(body.path("top_k").asInt()).isEqualTo(40);
        assertThat(body.path("min_p").asDouble()).isEqualTo(0.05);
        assertThat(body.path("presence_penalty").asDouble()).isEqualTo(0.5);
        assertThat(body.path("frequency_penalty").asDouble()).isEqualTo(-0.25);
        assertThat(body.path("repetition_penalty").asDouble()).isCloseTo(1.1, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(body.path("logit_bias").toString()).isEqualTo("{\"50256\":-100.0}");
        assertThat(body.path("stop").toString()).isEqualTo("[\"\\n\\n\",\"END\"]");
        assertThat(body.path("logprobs").asInt()).isEqualTo(3);
        assertThat(body.path("return_tokens_as_token_ids").asBoolean()).isTrue();
        assertThat(body.path("response_format").toString())
                .isEqualTo("{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"reply\",\"schema\":{\"type\":\"object\"}}}");

        engine.submit(EngineRequest.of("req-j", PROMPT, 3).withOptions(new SamplingOptions(null, null, null, null, null, null,
                java.util.Map.of(), false, 0, new SamplingOptions.OutputFormat(SamplingOptions.OutputFormat.Kind.JSON_OBJECT, null, null),
                java.util.List.of())), sink = new AwaitingSink()); // a fresh sink for the second request
        sink.await();
        JsonNode plain = server.lastRequest();
        assertThat(plain.path("response_format").toString()).isEqualTo("{\"type\":\"json_object\"}");
        for (String off : java.util.List.of("top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty",
                "repetition_penalty", "logit_bias", "stop", "logprobs", "seed", "ignore_eos")) {
            assertThat(plain.has(off)).as("%s the client did not set is left to the model's default", off).isFalse();
        }
        assertThat(engine.capabilities().getMaxTopLogprobs()).isEqualTo(20);
    }

    @Test
    void relaysLogprobsWithTheirIdsMostLikelyFirstCutToWhatWasAsked() {
        AwaitingSink sink = new AwaitingSink();
        engine.submit(EngineRequest.of("req-l", PROMPT, 3).withOptions(new SamplingOptions(null, null, null, null, null, null,
                java.util.Map.of(), true, 2, null, java.util.List.of())), sink);
        sink.await();
        assertThat(sink.logprobs()).hasSize(3);
        io.flotilla.worker.engine.TokenLogprob first = sink.logprobs().get(0);
        assertThat(first.logprob()).isEqualTo(-0.5f);
        assertThat(first.topIds()).containsExactly(101, 102);
        assertThat(first.topLogprobs()).containsExactly(-0.5f, -1.5f);
    }

    @Test
    void relaysTokensAndUsageWithCachedTokens() {
        server.cachedTokens = 4;
        server.finishReason = "stop";
        AwaitingSink sink = new AwaitingSink();
        engine.submit(EngineRequest.of("r", PROMPT, 3), sink);

        AwaitingSink.End end = sink.await();
        assertThat(sink.tokens()).containsExactly(101, 102, 103);
        assertThat(end).isEqualTo(new AwaitingSink.End(FinishReason.FINISH_REASON_STOP, 5, 4, 3, null));
        assertThat(sink.violations()).isEmpty();
    }

    @Test
    void cancellationClosesTheHttpStream() {
        server.endless = true;
        server.tokenDelayMs = 5;
        AwaitingSink sink = new AwaitingSink();
        RequestHandle h = engine.submit(EngineRequest.of("r", PROMPT, 100_000), sink);
        await().atMost(Duration.ofSeconds(10)).until(() -> sink.tokenCount() >= 3);

        h.cancel();
        h.cancel();
        AwaitingSink.End end = sink.await();
        assertThat(end.reason()).isEqualTo(FinishReason.FINISH_REASON_CANCELLED);
        assertThat(end.completionTokens()).isGreaterThanOrEqualTo(3);
        await().atMost(Duration.ofSeconds(10)).until(() -> server.disconnects.get() == 1 && server.openStreams.get() == 0);
        assertThat(sink.violations()).isEmpty();
        assertThat(engine.load().waitingPrefillTokens()).isZero();
    }

    @ParameterizedTest
    @CsvSource({"400, InvalidRequestException", "404, InvalidRequestException", "429, EngineOverloadedException",
            "503, EngineOverloadedException", "500, EngineUnavailableException"})
    void httpErrorsMapToEngineExceptions(int status, String exception) {
        server.status = status;
        server.errorBody = "{\"error\":{\"message\":\"the reason\",\"type\":\"X\",\"param\":null,\"code\":" + status + "}}";
        AwaitingSink sink = new AwaitingSink();
        engine.submit(EngineRequest.of("r", PROMPT, 3), sink);
        Throwable error = sink.await().error();
        assertThat(error.getClass().getSimpleName()).isEqualTo(exception);
        assertThat(error).hasMessageContaining("the reason").hasMessageContaining(String.valueOf(status));
    }

    @Test
    void anErrorInsideTheStreamEndsTheRequest() {
        server.streamError = "{\"object\":\"error\",\"message\":\"engine died\",\"type\":\"InternalServerError\",\"param\":null,\"code\":500}";
        AwaitingSink sink = new AwaitingSink();
        engine.submit(EngineRequest.of("r", PROMPT, 3), sink);
        assertThat(sink.await().error()).isInstanceOf(EngineUnavailableException.class).hasMessageContaining("engine died");
        assertThat(sink.tokens()).containsExactly(101);
    }

    @Test
    void aRefusedConnectionIsUnavailable() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        engine.close();
        engine = start(OpenAiEngineSettings.of("http://127.0.0.1:" + port, "m"));
        AwaitingSink sink = new AwaitingSink();
        engine.submit(EngineRequest.of("r", PROMPT, 3), sink);
        assertThat(sink.await().error()).isInstanceOf(EngineUnavailableException.class);
    }

    @Test
    void aPassedDeadlineEndsTheRequest() {
        server.endless = true;
        server.tokenDelayMs = 5;
        AwaitingSink sink = new AwaitingSink();
        engine.submit(EngineRequest.of("r", PROMPT, 100_000).withDeadline(Instant.now().plusMillis(300)), sink);
        assertThat(sink.await().error()).isInstanceOf(DeadlineExceededException.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> server.disconnects.get() == 1);
    }

    @Test
    void submitRefusesWhatItCanKnowAtOnce() {
        assertThatThrownBy(() -> engine.submit(EngineRequest.of("r", new int[0], 3), new AwaitingSink()))
                .isInstanceOf(InvalidRequestException.class);
        assertThatThrownBy(() -> engine.submit(EngineRequest.of("r", PROMPT, 0), new AwaitingSink()))
                .isInstanceOf(InvalidRequestException.class);
        assertThatThrownBy(() -> engine.submitWithKvTransfer(EngineRequest.of("r", PROMPT, 3), "[1]", new AwaitingSink()))
                .isInstanceOf(InvalidRequestException.class);
    }

    @Test
    void moreThanMaxInFlightIsOverloaded() {
        engine.close();
        engine = start(OpenAiEngineSettings.of(server.url(), "m").withMaxInFlight(1));
        server.endless = true;
        server.tokenDelayMs = 5;
        AwaitingSink first = new AwaitingSink();
        RequestHandle h = engine.submit(EngineRequest.of("a", PROMPT, 100_000), first);
        assertThatThrownBy(() -> engine.submit(EngineRequest.of("b", PROMPT, 3), new AwaitingSink()))
                .isInstanceOf(EngineOverloadedException.class);
        h.cancel();
        first.await();
        server.endless = false;
        AwaitingSink second = new AwaitingSink();
        engine.submit(EngineRequest.of("b", PROMPT, 3), second);
        assertThat(second.await().reason()).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
    }

    @Test
    void drainWaitsForInFlightRequestsAndCloseFailsTheRest() throws Exception {
        server.endless = true;
        server.tokenDelayMs = 5;
        AwaitingSink sink = new AwaitingSink();
        engine.submit(EngineRequest.of("r", PROMPT, 100_000), sink);
        var drained = engine.drain();
        assertThat(drained).isNotDone();
        assertThatThrownBy(() -> engine.submit(EngineRequest.of("s", PROMPT, 3), new AwaitingSink()))
                .isInstanceOf(EngineUnavailableException.class);
        engine.close();
        assertThat(sink.await().error()).isInstanceOf(EngineUnavailableException.class);
        drained.get(5, TimeUnit.SECONDS);
        assertThat(engine.healthy()).isFalse();
    }

    @Test
    void healthAndLoadComeFromTheEngineEndpoints() {
        await().atMost(Duration.ofSeconds(10)).until(engine::healthy);
        var load = engine.load();
        assertThat(load.running()).isEqualTo(3);
        assertThat(load.waiting()).isEqualTo(2);
        assertThat(load.totalKvBlocks()).isEqualTo(2048);
        assertThat(load.activeKvBlocks()).isEqualTo(512);
        server.healthStatus = 503;
        await().atMost(Duration.ofSeconds(10)).until(() -> !engine.healthy());
    }

    @Test
    void waitingPrefillTokensCountRequestsTheEngineHasNotAnswered() {
        server.endless = true;
        server.tokenDelayMs = 5;
        AwaitingSink sink = new AwaitingSink();
        RequestHandle h = engine.submit(EngineRequest.of("r", PROMPT, 100_000), sink);
        assertThat(engine.load().waitingPrefillTokens()).isIn(0L, 5L); // 5 until the first chunk arrives
        await().atMost(Duration.ofSeconds(10)).until(() -> sink.tokenCount() > 0);
        assertThat(engine.load().waitingPrefillTokens()).isZero();
        h.cancel();
    }

    @Test
    void clearCacheAsksTheEngine() {
        engine.clearCache();
        assertThat(server.cacheResets.get()).isEqualTo(1);
    }

    @Test
    void remotePrefillSendsDoRemoteDecodeAndReturnsTheTransferParams() throws Exception {
        server.cachedTokens = 2;
        server.blockSize = 2;
        RemotePrefill p = engine.prefillRemote(EngineRequest.of("req-p", PROMPT, 50)).get(10, TimeUnit.SECONDS);

        JsonNode body = server.lastRequest();
        assertThat(body.path("max_tokens").asInt()).isEqualTo(1);
        assertThat(body.path("stream").asBoolean(true)).isFalse();
        assertThat(body.path("kv_transfer_params").path("do_remote_decode").asBoolean()).isTrue();
        assertThat(body.path("kv_transfer_params").path("do_remote_prefill").asBoolean(true)).isFalse();
        assertThat(p.firstTokens()).containsExactly(101);
        assertThat(p.promptTokens()).isEqualTo(5);
        assertThat(p.cachedTokens()).isEqualTo(2);
        JsonNode params = JsonMapper.builder().build().readTree(p.kvTransferParams());
        assertThat(params.path("remote_engine_id").asString()).isEqualTo("engine-a");
        assertThat(params.path("do_remote_prefill").asBoolean()).isTrue();
        assertThat(params.path("remote_block_ids").toString()).as("the 5-token prompt's two full blocks").isEqualTo("[1,2]");

        AwaitingSink sink = new AwaitingSink();
        engine.submitWithKvTransfer(EngineRequest.of("req-p", PROMPT, 3), p.kvTransferParams(), sink);
        sink.await();
        assertThat(server.lastRequest().path("kv_transfer_params")).isEqualTo(params);
        assertThat(server.transferParamsReceived).containsExactly(params);
        assertThat(server.requestIds).containsExactly("req-p", "req-p");
    }

    @Test
    void anEngineWithoutKvConnectorReturnsNoParamsAndThePrefillFails() {
        server.kvConnector = false;
        var f = engine.prefillRemote(EngineRequest.of("p", PROMPT, 50));
        assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(EngineUnavailableException.class)
                .hasMessageContaining("kv_transfer_params");
    }

    @Test
    void remotePrefillFailuresCompleteTheFutureExceptionally() {
        server.status = 429;
        var f = engine.prefillRemote(EngineRequest.of("p", PROMPT, 50));
        assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(EngineOverloadedException.class);
    }

    @Test
    void withoutTokenIdsTheAdapterStillCountsTokens() {
        server.tokenIds = false;
        AwaitingSink sink = new AwaitingSink();
        engine.submit(EngineRequest.of("r", PROMPT, 3), sink);
        AwaitingSink.End end = sink.await();
        assertThat(sink.tokens()).isEmpty();
        assertThat(end.completionTokens()).isEqualTo(3);
    }
}
