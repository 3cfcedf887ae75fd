package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.worker.engine.EmbeddingSupport;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A vLLM worker's embeddings, passed through to the fake vLLM server's {@code /v1/embeddings} on a socket. */
class PooledEmbeddingsTest {

    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("m", "tok", "bf16/bs16/paged"), 16);

    private final FakeVllmServer server = new FakeVllmServer();
    private OpenAiHttpEngine engine;

    PooledEmbeddingsTest() throws IOException {
    }

    private EmbeddingSupport start(OpenAiHttpEngine.Pooling pooling) {
        engine = OpenAiHttpEngine.start(OpenAiEngineSettings.of(server.url(), "served-model"), LoraSettings.NONE, pooling,
                HASHER, Clock.systemUTC(), EngineListeners.NONE, "test-engine");
        return engine.feature(EmbeddingSupport.class).orElseThrow();
    }

    @AfterEach
    void close() {
        if (engine != null) {
            engine.close();
        }
        server.close();
    }

    @Test
    void tokenIdInputsGoToTheEnginesEmbeddingsAndComeBackInOrder() throws Exception {
        server.embeddingDimensions = 8;
        EmbeddingSupport embeddings = start(new OpenAiHttpEngine.Pooling(8, false));

        List<float[]> out = embeddings.embed("emb-1", List.of(new int[]{5, 6, 7}, new int[]{9}), 0).get(10, TimeUnit.SECONDS);

        JsonNode body = server.embedRequests.get(0);
        assertThat(body.path("model").asString()).isEqualTo("served-model");
        assertThat(body.path("input").toString()).isEqualTo("[[5,6,7],[9]]");
        assertThat(body.path("encoding_format").asString()).isEqualTo("float");
        assertThat(body.has("dimensions")).as("a value the client did not send is not sent on").isFalse();
        assertThat(out).hasSize(2);
        assertThat(out.get(0)).hasSize(8);
        assertThat(out.get(0)).isNotEqualTo(out.get(1));
        assertThat(embeddings.embed("emb-2", List.of(new int[]{9}), 0).get(10, TimeUnit.SECONDS).get(0))
                .containsExactly(out.get(1));
    }

    @Test
    void dimensionsReachAMatryoshkaEngineAndAreRefusedForAnyOther() throws Exception {
        server.embeddingDimensions = 8;
        server.matryoshka = true;
        EmbeddingSupport matryoshka = start(new OpenAiHttpEngine.Pooling(8, true));
        assertThat(matryoshka.embed("e", List.of(new int[]{1, 2}), 4).get(10, TimeUnit.SECONDS).get(0)).hasSize(4);
        assertThat(server.embedRequests.get(0).path("dimensions").asInt()).isEqualTo(4);
        engine.close();

        EmbeddingSupport plain = start(new OpenAiHttpEngine.Pooling(8, false));
        assertThatThrownBy(() -> plain.embed("e", List.of(new int[]{1, 2}), 4).get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("dimensions 4");
        assertThat(server.embedRequests).hasSize(1); // refused before the engine
    }

    @Test
    void anEngineWithoutAPoolingModelHasNoEmbeddingsAndAWrongLengthNeverReachesAClient() throws Exception {
        engine = OpenAiHttpEngine.start(OpenAiEngineSettings.of(server.url(), "served-model"), HASHER, Clock.systemUTC(),
                EngineListeners.NONE, "test-engine");
        assertThat(engine.feature(EmbeddingSupport.class)).isEmpty();
        engine.close();

        server.embeddingDimensions = 6;
        EmbeddingSupport misconfigured = start(new OpenAiHttpEngine.Pooling(8, false));
        assertThatThrownBy(() -> misconfigured.embed("e", List.of(new int[]{1}), 0).get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(EngineUnavailableException.class).hasMessageContaining("6 dimensions, 8 expected");
    }

    @Test
    void theEnginesRefusalIsAnInvalidRequest() {
        server.embeddingDimensions = 0; // the engine runs a generative model after all
        EmbeddingSupport embeddings = start(new OpenAiHttpEngine.Pooling(8, false));
        assertThatThrownBy(() -> embeddings.embed("e", List.of(new int[]{1}), 0).get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(InvalidRequestException.class).hasMessageContaining("does not support Embeddings API");
    }
}
