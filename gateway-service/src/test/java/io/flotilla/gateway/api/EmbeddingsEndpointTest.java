package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeWorker;
import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import io.flotilla.protocol.v1.EmbedRequest;
import io.flotilla.protocol.v1.RouteRequest;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code POST /v1/embeddings} against the fake cluster: OpenAI's shapes (string, strings, token ids, token-id arrays;
 * float and base64), routing by load to workers that embed, and every refusal as OpenAI's error body naming what is
 * wrong.
 */
class EmbeddingsEndpointTest extends GatewayTestBase {

    private static final Cl100kTokenizer CL100K = new Cl100kTokenizer();
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    MeterRegistry registry;

    private WebTestClient.ResponseSpec post(String body) {
        return web.post().uri("/v1/embeddings").contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    private JsonNode ok(String body) {
        return JSON.readTree(post(body).expectStatus().isOk().expectBody().returnResult().getResponseBody());
    }

    private static float[] floats(JsonNode vector) {
        float[] out = new float[vector.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = vector.get(i).floatValue();
        }
        return out;
    }

    private static int[] ids(EmbedRequest r, int input) {
        return r.getInputs(input).getTokenIdsList().stream().mapToInt(Integer::intValue).toArray();
    }

    @Test
    void aStringIsTokenizedAsAPromptAndEmbeddedByAWorkerRoutedByLoad() {
        JsonNode out = ok("{\"model\": \"flotilla-sim\", \"input\": \"The food was delicious\"}");

        int[] tokens = CL100K.encode("The food was delicious");
        assertThat(out.path("object").asString()).isEqualTo("list");
        assertThat(out.path("model").asString()).isEqualTo("flotilla-sim");
        assertThat(out.path("data")).hasSize(1);
        JsonNode item = out.path("data").get(0);
        assertThat(item.path("object").asString()).isEqualTo("embedding");
        assertThat(item.path("index").asInt()).isEqualTo(0);
        assertThat(floats(item.path("embedding"))).containsExactly(FakeWorker.embedding(tokens, 8));
        assertThat(out.path("usage").path("prompt_tokens").asInt()).isEqualTo(tokens.length);
        assertThat(out.path("usage").path("total_tokens").asInt()).isEqualTo(tokens.length);

        EmbedRequest sent = cluster.workerA.embeds.get(0);
        assertThat(ids(sent, 0)).containsExactly(tokens);
        assertThat(sent.getDimensions()).as("the client asked for no dimensions").isZero();
        RouteRequest route = cluster.router.routes.get(0);
        assertThat(route.getEmbed()).isTrue();
        assertThat(route.getSeqHashesCount()).as("no KV to reuse").isZero();
        assertThat(route.getOsl()).isZero();
        assertThat(route.getAllowDisagg()).isFalse();
        assertThat(route.getIsl()).isEqualTo(tokens.length);
        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.router.releases).contains(route.getRequestId()));
        await().atMost(WAIT).untilAsserted(() -> assertThat(registry.find("flotilla.gateway.requests")
                .tags("endpoint", "/v1/embeddings", "model", "flotilla-sim", "outcome", "ok").counter()).isNotNull());
        assertThat(registry.find("flotilla.gateway.embedding.inputs").tag("model", "flotilla-sim").counter().count())
                .isPositive();
    }

    @Test
    void everyKindOfInputIsEmbeddedSeparatelyInOrder() {
        JsonNode strings = ok("{\"input\": [\"first\", \"second text\"]}");
        assertThat(strings.path("data")).hasSize(2);
        assertThat(strings.path("data").get(1).path("index").asInt()).isEqualTo(1);
        assertThat(floats(strings.path("data").get(1).path("embedding")))
                .containsExactly(FakeWorker.embedding(CL100K.encode("second text"), 8));

        JsonNode ids = ok("{\"input\": [11, 12, 13]}");
        assertThat(ids.path("data")).hasSize(1);
        assertThat(floats(ids.path("data").get(0).path("embedding")))
                .containsExactly(FakeWorker.embedding(new int[]{11, 12, 13}, 8));
        assertThat(ids.path("usage").path("prompt_tokens").asInt()).isEqualTo(3);

        JsonNode arrays = ok("{\"input\": [[1, 2], [3]]}");
        assertThat(arrays.path("data")).hasSize(2);
        assertThat(floats(arrays.path("data").get(0).path("embedding"))).containsExactly(FakeWorker.embedding(new int[]{1, 2}, 8));
        assertThat(floats(arrays.path("data").get(1).path("embedding"))).containsExactly(FakeWorker.embedding(new int[]{3}, 8));
        EmbedRequest last = cluster.workerA.embeds.get(cluster.workerA.embeds.size() - 1);
        assertThat(ids(last, 0)).containsExactly(1, 2);
        assertThat(ids(last, 1)).containsExactly(3);
    }

    @Test
    void base64IsLittleEndianFloat32() {
        JsonNode out = ok("{\"input\": [5, 6], \"encoding_format\": \"base64\"}");
        byte[] bytes = Base64.getDecoder().decode(out.path("data").get(0).path("embedding").asString());
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        float[] decoded = new float[bytes.length / 4];
        for (int i = 0; i < decoded.length; i++) {
            decoded[i] = buffer.getFloat();
        }
        assertThat(decoded).containsExactly(FakeWorker.embedding(new int[]{5, 6}, 8));
    }

    @Test
    void dimensionsReachAWorkerThatCanShortenItsVectorsAndAreRefusedByNameElsewhere() {
        JsonNode out = ok("{\"input\": \"short\", \"dimensions\": 3}");
        assertThat(out.path("data").get(0).path("embedding")).hasSize(3);
        assertThat(cluster.workerA.embeds.get(0).getDimensions()).isEqualTo(3);

        post("{\"model\": \"tiny-model\", \"input\": \"short\", \"dimensions\": 3}").expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error.param").isEqualTo("dimensions")
                .jsonPath("$.error.code").isEqualTo("unsupported_parameter")
                .jsonPath("$.error.type").isEqualTo("invalid_request_error");
        expect400("{\"input\": \"short\", \"dimensions\": 9}", "dimensions");
        expect400("{\"input\": \"short\", \"dimensions\": 0}", "dimensions");
        assertThat(cluster.workerA.embeds).hasSize(1);
    }

    @Test
    void aModelThatCannotEmbedIsA400NamingTheModelAndAnUnknownOneA404() {
        post("{\"model\": \"plain-model\", \"input\": \"x\"}").expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.param").isEqualTo("model")
                .jsonPath("$.error.code").isEqualTo("model_not_embedding");
        post("{\"model\": \"ghost-model\", \"input\": \"x\"}").expectStatus().isNotFound().expectBody()
                .jsonPath("$.error.code").isEqualTo("model_not_found");
        assertThat(cluster.router.routes).isEmpty();
    }

    @Test
    void badInputIsA400NamingIt() {
        expect400("{\"model\": \"flotilla-sim\"}", "input");
        expect400("{\"input\": \"\"}", "input");
        expect400("{\"input\": []}", "input");
        expect400("{\"input\": [[]]}", "input");
        expect400("{\"input\": [\"a\", 5]}", "input");
        expect400("{\"input\": [1, -2]}", "input");
        expect400("{\"input\": [1, 2.5]}", "input");
        expect400("{\"input\": {\"text\": \"a\"}}", "input");
        expect400("{\"input\": [1, 999999999]}", "input");
        expect400("{\"input\": \"a\", \"encoding_format\": \"int8\"}", "encoding_format");
        expect400("{\"input\": \"a\", \"user\": 5}", "user");
        expect400("{\"input\": \"a\", \"temperature\": 0.5}", "temperature");
        post("{\"model\": \"tiny-model\", \"input\": " + java.util.Collections.nCopies(65, 1) + "}")
                .expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.code").isEqualTo("context_length_exceeded")
                .jsonPath("$.error.param").isEqualTo("input");
        assertThat(cluster.workerA.embeds).isEmpty();
    }

    @Test
    void theWorkersRefusalIsA400AndItsFailureA503() {
        cluster.workerA.embedFailure = Status.INVALID_ARGUMENT.withDescription("input 0: too odd");
        post("{\"input\": \"x\"}").expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.param").isEqualTo("input")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("too odd"));
        cluster.workerA.embedFailure = Status.UNAVAILABLE.withDescription("engine gone");
        post("{\"input\": \"x\"}").expectStatus().isEqualTo(503).expectHeader().exists("Retry-After")
                .expectBody().jsonPath("$.error.code").isEqualTo("worker_unavailable");
    }

    private void expect400(String body, String param) {
        post(body).expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.param").isEqualTo(param);
    }
}
