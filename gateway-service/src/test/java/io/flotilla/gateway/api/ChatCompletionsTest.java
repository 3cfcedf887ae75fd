package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.FakeWorker;
import io.flotilla.gateway.fakes.Sse;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.RequestOutcome;
import io.flotilla.protocol.v1.RouteRequest;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import tools.jackson.databind.JsonNode;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** {@code POST /v1/chat/completions} against fake router and workers: shapes, headers, what reaches the workers. */
class ChatCompletionsTest extends GatewayTestBase {

    private EntityExchangeResult<byte[]> post(String body) {
        return web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk().expectBody(byte[].class).returnResult();
    }

    @Test
    void wholeCompletionHasOpenAiShapeUsageAndWorkerHeader() {
        EntityExchangeResult<byte[]> result = post("""
                {"model":"flotilla-sim","messages":[{"role":"system","content":"Be brief."},
                 {"role":"user","content":"Say something"}],"max_tokens":7}""");
        JsonNode body = Sse.json(result.getResponseBody());

        assertThat(body.get("id").stringValue()).startsWith("chatcmpl-");
        assertThat(body.get("object").stringValue()).isEqualTo("chat.completion");
        assertThat(body.get("created").longValue()).isPositive();
        assertThat(body.get("model").stringValue()).isEqualTo("flotilla-sim");
        JsonNode choice = body.get("choices").get(0);
        assertThat(choice.get("index").intValue()).isZero();
        assertThat(choice.get("message").get("role").stringValue()).isEqualTo("assistant");
        assertThat(choice.get("message").get("content").stringValue()).isEqualTo(FakeCluster.expectedText(7));
        assertThat(choice.get("finish_reason").stringValue()).isEqualTo("length");
        GenerateRequest sent = cluster.workerA.generates.get(0);
        JsonNode usage = body.get("usage");
        assertThat(usage.get("prompt_tokens").intValue()).isEqualTo(sent.getTokenIdsCount());
        assertThat(usage.get("completion_tokens").intValue()).isEqualTo(7);
        assertThat(usage.get("total_tokens").intValue()).isEqualTo(sent.getTokenIdsCount() + 7);
        assertThat(usage.get("prompt_tokens_details").get("cached_tokens").intValue()).isZero();
        assertThat(result.getResponseHeaders().getFirst(ResponseHeaders.WORKER)).isEqualTo("worker-a");
        assertThat(result.getResponseHeaders().getFirst(ResponseHeaders.PREFILL_WORKER)).isNull();
    }

    @Test
    void promptIsTheChatMlTemplateInCl100kAndRouteCarriesItsBlockHashes() {
        post("""
                {"messages":[{"role":"user","content":[{"type":"text","text":"Hello"},{"type":"text","text":"world"}]}],
                 "max_completion_tokens":3,"temperature":0.5,"top_p":0.9,"seed":-42,"ignore_eos":true,"user":"tenant-7"}""");

        GenerateRequest sent = cluster.workerA.generates.get(0);
        int[] expected = FakeCluster.TOKENIZER.encode("<|im_start|>user\nHello\nworld<|im_end|>\n<|im_start|>assistant\n");
        assertThat(sent.getTokenIdsList()).containsExactly(java.util.Arrays.stream(expected).boxed().toArray(Integer[]::new));
        assertThat(sent.getModel()).isEqualTo("flotilla-sim"); // the default model
        assertThat(sent.getTenant()).isEqualTo("tenant-7");
        assertThat(sent.getStop().getMaxTokens()).isEqualTo(3);
        assertThat(sent.getStop().getIgnoreEos()).isTrue();
        assertThat(sent.getSampling().getTemperature()).isEqualTo(0.5);
        assertThat(sent.getSampling().getTopP()).isEqualTo(0.9);
        assertThat(sent.getSampling().hasSeed()).isTrue();
        assertThat(sent.getSampling().getSeed()).isEqualTo(-42L);
        assertThat(sent.hasHandoff()).isFalse();

        RouteRequest route = cluster.router.routesOf(sent.getRequestId()).get(0);
        assertThat(route.getModel()).isEqualTo("flotilla-sim");
        assertThat(route.getTenant()).isEqualTo("tenant-7");
        assertThat(route.getIsl()).isEqualTo(expected.length);
        assertThat(route.getOsl()).isEqualTo(3);
        assertThat(route.getBlockSize()).isEqualTo(16);
        assertThat(route.getAllowDisagg()).isTrue();
        long[] hashes = new BlockHasher(KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16).seqHashes(expected);
        assertThat(route.getSeqHashesList()).containsExactly(java.util.Arrays.stream(hashes).boxed().toArray(Long[]::new));
        // MarkPrefillDone is fire-and-forget bookkeeping: it may reach the router after the response.
        await().atMost(WAIT).until(() -> cluster.router.prefillDone.contains(sent.getRequestId()));
        await().atMost(WAIT).until(() -> cluster.router.releases.contains(sent.getRequestId()));
        await().atMost(WAIT).until(() -> cluster.records.of(sent.getRequestId()).isPresent());
        var record = cluster.records.of(sent.getRequestId()).orElseThrow();
        assertThat(record.getOutcome()).isEqualTo(RequestOutcome.REQUEST_OUTCOME_OK);
        assertThat(record.getModel()).isEqualTo("flotilla-sim");
        assertThat(record.getTenant()).isEqualTo("tenant-7");
        assertThat(record.getIsl()).isEqualTo(expected.length);
        assertThat(record.getOsl()).isEqualTo(3);
        assertThat(record.getWorker()).isEqualTo("worker-a");
        assertThat(record.getMigrations()).isZero();
        assertThat(record.getE2EMs()).isPositive();
    }

    @Test
    void streamIsRoleChunkThenContentThenFinishThenDone() {
        EntityExchangeResult<byte[]> result = post("""
                {"model":"flotilla-sim","messages":[{"role":"user","content":"hi"}],"max_tokens":30,"stream":true}""");
        assertThat(result.getResponseHeaders().getContentType().isCompatibleWith(MediaType.TEXT_EVENT_STREAM)).isTrue();
        assertThat(result.getResponseHeaders().getFirst(ResponseHeaders.WORKER)).isEqualTo("worker-a");
        List<JsonNode> chunks = Sse.chunks(result.getResponseBody());

        JsonNode first = chunks.get(0);
        String id = first.get("id").stringValue();
        assertThat(id).startsWith("chatcmpl-");
        assertThat(first.get("choices").get(0).get("delta").get("role").stringValue()).isEqualTo("assistant");
        assertThat(first.get("choices").get(0).get("delta").get("content").stringValue()).isEmpty();
        StringBuilder content = new StringBuilder();
        for (JsonNode c : chunks) {
            assertThat(c.get("id").stringValue()).isEqualTo(id);
            assertThat(c.get("object").stringValue()).isEqualTo("chat.completion.chunk");
            assertThat(c.get("model").stringValue()).isEqualTo("flotilla-sim");
            assertThat(c.get("created").longValue()).isEqualTo(first.get("created").longValue());
            assertThat(c.has("usage")).isFalse();
            JsonNode delta = c.get("choices").get(0).get("delta");
            if (delta.has("content")) {
                content.append(delta.get("content").stringValue());
            }
        }
        JsonNode last = chunks.get(chunks.size() - 1).get("choices").get(0);
        assertThat(last.get("delta").isEmpty()).isTrue();
        assertThat(last.get("finish_reason").stringValue()).isEqualTo("length");
        assertThat(chunks.subList(0, chunks.size() - 1))
                .allSatisfy(c -> assertThat(c.get("choices").get(0).get("finish_reason").isNull()).isTrue());
        assertThat(content.toString()).isEqualTo(FakeCluster.expectedText(30)).contains("😀", "ünïcödé");
    }

    @Test
    void includeUsageAddsAFinalUsageChunkAndNullUsageElsewhere() {
        cluster.workerA.behave(FakeWorker.Behaviour.cached(16));
        EntityExchangeResult<byte[]> result = post("""
                {"messages":[{"role":"user","content":"hi"}],"max_tokens":4,"stream":true,
                 "stream_options":{"include_usage":true}}""");
        List<JsonNode> chunks = Sse.chunks(result.getResponseBody());
        JsonNode usageChunk = chunks.get(chunks.size() - 1);
        assertThat(usageChunk.get("choices").isEmpty()).isTrue();
        JsonNode usage = usageChunk.get("usage");
        int prompt = cluster.workerA.generates.get(0).getTokenIdsCount();
        assertThat(usage.get("prompt_tokens").intValue()).isEqualTo(prompt);
        assertThat(usage.get("completion_tokens").intValue()).isEqualTo(4);
        assertThat(usage.get("total_tokens").intValue()).isEqualTo(prompt + 4);
        assertThat(usage.get("prompt_tokens_details").get("cached_tokens").intValue()).isEqualTo(16);
        assertThat(chunks.subList(0, chunks.size() - 1)).allSatisfy(c -> assertThat(c.get("usage").isNull()).isTrue());
    }

    @Test
    void cachedTokensAreCappedAtThePromptLength() {
        cluster.workerA.behave(FakeWorker.Behaviour.cached(10_000));
        JsonNode body = Sse.json(post("""
                {"messages":[{"role":"user","content":"hi"}],"max_tokens":2}""").getResponseBody());
        assertThat(body.get("usage").get("prompt_tokens_details").get("cached_tokens").intValue())
                .isEqualTo(body.get("usage").get("prompt_tokens").intValue());
    }

    @Test
    void aMultiTokenStopStringCutsTheStreamBeforeIt() {
        EntityExchangeResult<byte[]> result = post("""
                {"messages":[{"role":"user","content":"hi"}],"max_tokens":40,"stream":true,"stop":["lazy dog"]}""");
        List<JsonNode> chunks = Sse.chunks(result.getResponseBody());
        StringBuilder content = new StringBuilder();
        chunks.forEach(c -> {
            JsonNode d = c.get("choices").get(0).get("delta");
            if (d.has("content")) {
                content.append(d.get("content").stringValue());
            }
        });
        assertThat(content.toString()).isEqualTo("The quick brown fox jumps over the ");
        assertThat(chunks.get(chunks.size() - 1).get("choices").get(0).get("finish_reason").stringValue()).isEqualTo("stop");
        assertThat(cluster.workerA.generates.get(0).getStop().getStopTokenIdsList()).isEmpty();
    }

    @Test
    void aSingleTokenStopStringIsPassedAsStopTokenIdAndCut() {
        JsonNode body = Sse.json(post("""
                {"messages":[{"role":"user","content":"hi"}],"max_tokens":40,"stop":" fox"}""").getResponseBody());
        assertThat(body.get("choices").get(0).get("message").get("content").stringValue()).isEqualTo("The quick brown");
        assertThat(body.get("choices").get(0).get("finish_reason").stringValue()).isEqualTo("stop");
        int fox = FakeCluster.TOKENIZER.encode(" fox")[0];
        assertThat(cluster.workerA.generates.get(0).getStop().getStopTokenIdsList()).containsExactly(fox);
        assertThat(body.get("usage").get("completion_tokens").intValue()).isEqualTo(4); // "The", " quick", " brown", " fox"
    }

    @Test
    void aPrefillWorkerHandsOffToTheDecodeWorker() {
        cluster.router.decide(r -> cluster.withPrefill(cluster.decisionFor(cluster.workerA)).build());
        EntityExchangeResult<byte[]> result = post("""
                {"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}""");
        assertThat(result.getResponseHeaders().getFirst(ResponseHeaders.WORKER)).isEqualTo("worker-a");
        assertThat(result.getResponseHeaders().getFirst(ResponseHeaders.PREFILL_WORKER)).isEqualTo("worker-p");
        GenerateRequest decode = cluster.workerA.generates.get(0);
        assertThat(decode.getHandoff().getSourceWorkerId()).isEqualTo("worker-p");
        assertThat(cluster.workerP.prefills).hasSize(1);
        assertThat(cluster.workerP.prefills.get(0).getTokenIdsList()).isEqualTo(decode.getTokenIdsList());
        List<JsonNode> chunks = Sse.chunks(result.getResponseBody());
        assertThat(chunks.get(chunks.size() - 1).get("usage").get("prompt_tokens_details").get("cached_tokens").intValue())
                .as("the prefill worker's cache hits").isEqualTo(7);
        await().atMost(WAIT).until(() -> cluster.records.of(decode.getRequestId()).isPresent());
        assertThat(cluster.records.of(decode.getRequestId()).orElseThrow().getPrefillWorker()).isEqualTo("worker-p");
        await().atMost(WAIT).until(() -> cluster.router.prefillDone.contains(decode.getRequestId()));
    }

    @Test
    void aRefusedHandoffIsNotReportedAsPrefilledElsewhere() {
        cluster.router.decide(r -> cluster.withPrefill(cluster.decisionFor(cluster.workerA)).build());
        cluster.workerA.behave(FakeWorker.Behaviour.handoffRefusing());
        EntityExchangeResult<byte[]> result = post("""
                {"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}""");
        assertThat(cluster.workerP.prefills).hasSize(1);
        GenerateRequest decode = cluster.workerA.generates.get(0);
        assertThat(decode.hasHandoff()).isTrue();
        assertThat(result.getResponseHeaders().getFirst(ResponseHeaders.WORKER)).isEqualTo("worker-a");
        assertThat(result.getResponseHeaders().getFirst(ResponseHeaders.PREFILL_WORKER)).isNull();
        List<JsonNode> chunks = Sse.chunks(result.getResponseBody());
        assertThat(chunks.get(chunks.size() - 1).get("usage").get("prompt_tokens_details").get("cached_tokens").intValue())
                .as("the decode worker's own cache hits, not the prefill worker's").isZero();
        await().atMost(WAIT).until(() -> cluster.records.of(decode.getRequestId()).isPresent());
        assertThat(cluster.records.of(decode.getRequestId()).orElseThrow().getPrefillWorker()).isEmpty();
    }

    @Test
    void aFailedPrefillFallsBackToTheDecodeWorkerAlone() {
        cluster.router.decide(r -> cluster.withPrefill(cluster.decisionFor(cluster.workerA)).build());
        cluster.workerP.behave(FakeWorker.Behaviour.prefillFailing());
        EntityExchangeResult<byte[]> result = post("""
                {"messages":[{"role":"user","content":"hi"}],"max_tokens":3}""");
        assertThat(result.getResponseHeaders().getFirst(ResponseHeaders.PREFILL_WORKER)).isNull();
        assertThat(cluster.workerA.generates.get(0).hasHandoff()).isFalse();
        assertThat(Sse.json(result.getResponseBody()).get("choices").get(0).get("message").get("content").stringValue())
                .isEqualTo(FakeCluster.expectedText(3));
    }

    @Test
    void disaggHeaderOffForbidsDisaggregationAndAutoLeavesItToTheRouter() {
        String body = """
                {"model":"flotilla-sim","messages":[{"role":"user","content":"Hi"}],"max_tokens":2}""";
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).header(ResponseHeaders.DISAGG, "off")
                .bodyValue(body).exchange().expectStatus().isOk();
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).header(ResponseHeaders.DISAGG, "AUTO")
                .bodyValue(body).exchange().expectStatus().isOk();

        List<GenerateRequest> sent = cluster.workerA.generates;
        assertThat(sent).hasSize(2);
        assertThat(cluster.router.routesOf(sent.get(0).getRequestId()).get(0).getAllowDisagg()).isFalse();
        assertThat(cluster.router.routesOf(sent.get(1).getRequestId()).get(0).getAllowDisagg()).isTrue();
    }

    @Test
    void unknownDisaggHeaderValueIsA400NamingTheHeader() {
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).header(ResponseHeaders.DISAGG, "always")
                .bodyValue("""
                        {"model":"flotilla-sim","messages":[{"role":"user","content":"Hi"}]}""")
                .exchange().expectStatus().isBadRequest()
                .expectBody()
                .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("x-flotilla-disagg").contains("always"));
        assertThat(cluster.workerA.generates).isEmpty();
    }
}
