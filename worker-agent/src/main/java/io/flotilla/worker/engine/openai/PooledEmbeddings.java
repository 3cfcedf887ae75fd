package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.EmbeddingSupport;
import io.flotilla.worker.engine.EngineException;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Embeddings of a vLLM server that runs a pooling model ({@code vllm serve <model> --runner pooling}), passed
 * through: the inputs go to the engine's own {@code POST /v1/embeddings} as token-id arrays, the vectors come back as
 * the engine pooled and normalised them. The engine does not say what it pools into, so the worker is told
 * ({@code flotilla.worker.http.embedding-dimensions}, {@code .embedding-truncatable}) and checks every answer
 * against it: a vector of another length fails the call rather than reach a client. {@code dimensions} goes to the
 * engine only when the client asked for it (vLLM honours it for Matryoshka models and refuses it for others).
 *
 * @param dimensions  length of the engine's vectors
 * @param truncatable the engine's model is a Matryoshka model (vLLM accepts {@code dimensions})
 * @param refuseIfDraining throws {@link EngineUnavailableException} once the engine drains or closed
 */
record PooledEmbeddings(int dimensions, boolean truncatable, String servedModel, EngineHttp http,
                        Runnable refuseIfDraining) implements EmbeddingSupport {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    static final String PATH = "/v1/embeddings";

    PooledEmbeddings {
        if (dimensions < 1) {
            throw new IllegalArgumentException("embedding dimensions must be positive, got " + dimensions);
        }
    }

    @Override
    public CompletableFuture<List<float[]>> embed(String requestId, List<int[]> inputs, int wanted) {
        String refused = EmbeddingSupport.refusedDimensions(this, wanted);
        if (refused != null) {
            return CompletableFuture.failedFuture(new InvalidRequestException(refused));
        }
        try {
            refuseIfDraining.run();
        } catch (EngineException e) {
            return CompletableFuture.failedFuture(e);
        }
        int expected = wanted == 0 ? dimensions : wanted;
        return http.call(PATH, body(servedModel, inputs, wanted), requestId)
                .map(json -> vectors(json, inputs.size(), expected))
                .onErrorMap(e -> !(e instanceof EngineException), EngineHttpErrors::forFailure)
                .toFuture();
    }

    /** The engine's request: every input as token ids, floats, {@code dimensions} only when asked for. */
    static String body(String model, List<int[]> inputs, int dimensions) {
        ObjectNode body = JSON.createObjectNode().put("model", model).put("encoding_format", "float");
        ArrayNode input = body.putArray("input");
        for (int[] ids : inputs) {
            ArrayNode one = input.addArray();
            for (int id : ids) {
                one.add(id);
            }
        }
        if (dimensions > 0) {
            body.put("dimensions", dimensions);
        }
        return JSON.writeValueAsString(body);
    }

    /** The vectors of an OpenAI embeddings response, by {@code index}; each must be {@code expected} long. */
    static List<float[]> vectors(String json, int inputs, int expected) {
        JsonNode data = JSON.readTree(json).path("data");
        if (!data.isArray() || data.size() != inputs) {
            throw new EngineUnavailableException("engine returned " + (data.isArray() ? data.size() : "no")
                    + " embeddings for " + inputs + " inputs");
        }
        List<float[]> out = new ArrayList<>(java.util.Collections.nCopies(inputs, (float[]) null));
        for (JsonNode item : data) {
            int index = item.path("index").asInt(-1);
            JsonNode vector = item.path("embedding");
            if (index < 0 || index >= inputs || out.get(index) != null || !vector.isArray()) {
                throw new EngineUnavailableException("engine returned a malformed embedding (index " + index + ")");
            }
            if (vector.size() != expected) {
                throw new EngineUnavailableException("engine returned an embedding of " + vector.size()
                        + " dimensions, " + expected + " expected (flotilla.worker.http.embedding-dimensions)");
            }
            float[] v = new float[expected];
            for (int i = 0; i < expected; i++) {
                v[i] = vector.get(i).floatValue();
            }
            out.set(index, v);
        }
        return out;
    }
}
