package io.flotilla.worker.engine.sglang;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What {@code GET /get_server_info} of an SGLang server says about its KV cache: the server arguments
 * ({@code page_size}, {@code model_path}, …) merged with the scheduler's {@code max_total_num_tokens} (the
 * KV pool in tokens). Older servers report the latter only inside {@code internal_states[0]}.
 *
 * @param maxTotalTokens KV pool size in tokens; 0 when absent
 * @param pageSize       tokens per KV page (SGLang's block size, 1 by default); 0 when absent
 */
record SglangServerInfo(long maxTotalTokens, int pageSize) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    static SglangServerInfo parse(String json) {
        JsonNode root = JSON.readTree(json);
        long tokens = root.path("max_total_num_tokens").asLong(0);
        if (tokens <= 0) {
            tokens = root.path("internal_states").path(0).path("max_total_num_tokens").asLong(0);
        }
        return new SglangServerInfo(tokens, root.path("page_size").asInt(0));
    }

    /** The pool in blocks of {@code blockSize} tokens. */
    int blocks(int blockSize) {
        return (int) Math.min(Integer.MAX_VALUE, maxTotalTokens / blockSize);
    }
}
