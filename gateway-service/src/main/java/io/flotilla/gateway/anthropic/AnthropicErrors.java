package io.flotilla.gateway.anthropic;

import io.flotilla.gateway.openai.ApiError;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The gateway's errors in Anthropic's shape, {@code {"type": "error", "error": {"type", "message"}}}, with
 * Anthropic's statuses: a refusal for capacity (flow control's {@code queue_full}, every 503) is 529
 * {@code overloaded_error}, which Anthropic's clients back off from; a key's rate limit stays 429
 * {@code rate_limit_error}. The message is the gateway's own, so a refused parameter is still named.
 */
public final class AnthropicErrors {

    /** Anthropic's status for an overloaded API. */
    public static final int OVERLOADED = 529;

    private AnthropicErrors() {
    }

    /** Whether a request path is answered in Anthropic's shapes. */
    public static boolean anthropicPath(String path) {
        return path.equals("/v1/messages") || path.startsWith("/v1/messages/");
    }

    public static int status(ApiError e) {
        return overloaded(e) ? OVERLOADED : e.status();
    }

    public static String type(ApiError e) {
        if (overloaded(e)) {
            return "overloaded_error";
        }
        return switch (e.status()) {
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 404 -> "not_found_error";
            case 413 -> "request_too_large";
            case 429 -> "rate_limit_error";
            case 504 -> "timeout_error";
            default -> e.status() < 500 ? "invalid_request_error" : "api_error";
        };
    }

    public static String body(JsonMapper json, ApiError e) {
        ObjectNode root = json.createObjectNode().put("type", "error");
        root.putObject("error").put("type", type(e)).put("message", e.getMessage());
        return json.writeValueAsString(root);
    }

    /** Refused for lack of capacity rather than for the caller's own limit. */
    private static boolean overloaded(ApiError e) {
        return e.status() == 503 || (e.status() == 429 && !"rate_limited".equals(e.code()));
    }
}
