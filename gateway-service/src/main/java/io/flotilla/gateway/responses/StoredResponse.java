package io.flotilla.gateway.responses;

/**
 * A response as the store keeps it.
 *
 * @param id         {@code resp_…}
 * @param owner      who may read it: a digest of the API key that created it (never the key itself)
 * @param worker     the worker that generated it (its KV holds the conversation so far), "" when unknown
 * @param response   the response object, JSON
 * @param inputItems every input item of the response (the conversation before its output), a JSON array
 */
public record StoredResponse(String id, String owner, String worker, String response, String inputItems) {
}
