package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.EngineException;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * How an engine server's HTTP failures map to engine exceptions (and so to gRPC codes):
 * 400/404/413/422 → {@link InvalidRequestException} (the request can never run there: bad ids,
 * too long, unknown model); 429/503 → {@link EngineOverloadedException} (try another worker);
 * any other status, and transport failures → {@link EngineUnavailableException}.
 */
public final class EngineHttpErrors {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int MAX_MESSAGE = 300;

    private EngineHttpErrors() {
    }

    public static EngineException forStatus(int status, String body) {
        String message = "engine answered " + status + ": " + message(body);
        return switch (status) {
            case 400, 404, 413, 422 -> new InvalidRequestException(message);
            case 429, 503 -> new EngineOverloadedException(message);
            default -> new EngineUnavailableException(message);
        };
    }

    /** An error object inside a stream ({@code {"object":"error","code":400,...}} or {@code {"error":{...}}}). */
    static EngineException forStreamError(JsonNode error) {
        return forStreamError(error, 500);
    }

    /** As {@link #forStreamError(JsonNode)}, with {@code defaultCode} for an error object that names none. */
    public static EngineException forStreamError(JsonNode error, int defaultCode) {
        JsonNode e = error.has("error") && error.get("error").isObject() ? error.get("error") : error;
        int code = e.path("code").asInt(defaultCode);
        return forStatus(code, e.toString());
    }

    static EngineException forFailure(Throwable error) {
        if (error instanceof EngineException e) {
            return e;
        }
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return new EngineUnavailableException("engine unreachable: " + error.getClass().getSimpleName()
                + (root.getMessage() == null ? "" : " (" + root.getMessage() + ")"));
    }

    /** The message field of an OpenAI-style error body, else the body itself, truncated. */
    static String message(String body) {
        if (body == null || body.isBlank()) {
            return "(no body)";
        }
        String text = body;
        try {
            JsonNode n = JSON.readTree(body);
            JsonNode m = n.path("error").isObject() ? n.path("error").path("message") : n.path("message");
            if (m.isString()) {
                text = m.stringValue();
            } else if (n.path("detail").isString()) {
                text = n.path("detail").stringValue();
            }
        } catch (RuntimeException e) {
            // not JSON: keep the raw text
        }
        return text.length() > MAX_MESSAGE ? text.substring(0, MAX_MESSAGE) + "…" : text;
    }
}
