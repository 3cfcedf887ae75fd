package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.EngineException;
import io.flotilla.worker.engine.TokenLogprob;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One {@code text_completion} object: a streamed chunk ({@code data: {...}}) or a whole non-streamed
 * response, reduced to what the worker needs.
 *
 * <p>Token ids come from {@code choices[0].token_ids} (vLLM ≥ 0.10 with {@code return_token_ids};
 * the first chunk may also carry {@code prompt_token_ids}, ignored). Without them, ids written as
 * {@code "token_id:123"} in {@code choices[0].logprobs.tokens} (vLLM's
 * {@code --return-tokens-as-token-ids}) are used. When neither is present the chunk still counts as
 * one generated token ({@link #countedTokens()}) but no id can be relayed: the adapter cannot
 * re-tokenize text without the model's tokenizer.
 *
 * @param tokenIds         generated token ids in this chunk, or null when the engine sent none
 * @param finishReason     the engine's finish reason, or null while generating
 * @param usage            usage, on the final (or usage-only) chunk, else null
 * @param kvTransferParams the {@code kv_transfer_params} object as JSON text, or null
 * @param error            an error object the engine put in the stream, else null
 * @param hasChoice        whether the chunk has a choice (usage-only chunks have none)
 * @param logprobs         one per token id when the request asked for {@code logprobs} (vLLM's
 *                         {@code choices[0].logprobs} with {@code return_tokens_as_token_ids}: tokens and
 *                         the keys of {@code top_logprobs} are {@code "token_id:N"}), else null
 */
public record CompletionChunk(int[] tokenIds, String finishReason, Usage usage, String kvTransferParams,
                              EngineException error, boolean hasChoice, TokenLogprob[] logprobs) {

    /** A chunk without log-probabilities. */
    public CompletionChunk(int[] tokenIds, String finishReason, Usage usage, String kvTransferParams,
                           EngineException error, boolean hasChoice) {
        this(tokenIds, finishReason, usage, kvTransferParams, error, hasChoice, null);
    }

    /**
     * @param promptTokens     prompt length
     * @param completionTokens tokens generated
     * @param cachedTokens     prompt tokens served from the prefix cache
     *                         ({@code prompt_tokens_details.cached_tokens}; 0 when the engine omits it)
     */
    public record Usage(int promptTokens, int completionTokens, int cachedTokens) {
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String TOKEN_ID_PREFIX = "token_id:";

    public static CompletionChunk parse(String json) {
        JsonNode root = JSON.readTree(json);
        if (root.has("error") || "error".equals(root.path("object").asString(""))) {
            return new CompletionChunk(null, null, null, null, EngineHttpErrors.forStreamError(root), false, null);
        }
        JsonNode choice = root.path("choices").path(0);
        boolean hasChoice = choice.isObject();
        int[] ids = hasChoice ? tokenIds(choice) : null;
        String finish = hasChoice && choice.path("finish_reason").isString() ? choice.get("finish_reason").stringValue() : null;
        Usage usage = null;
        JsonNode u = root.path("usage");
        if (u.isObject()) {
            usage = new Usage(u.path("prompt_tokens").asInt(0), u.path("completion_tokens").asInt(0),
                    u.path("prompt_tokens_details").path("cached_tokens").asInt(0));
        }
        JsonNode kv = root.path("kv_transfer_params");
        TokenLogprob[] logprobs = hasChoice ? logprobs(choice.path("logprobs")) : null;
        if (logprobs != null && ids != null && logprobs.length != ids.length) {
            throw new IllegalArgumentException(ids.length + " token ids but " + logprobs.length + " logprobs");
        }
        return new CompletionChunk(ids, finish, usage, kv.isObject() ? kv.toString() : null, null, hasChoice, logprobs);
    }

    /** {@code {tokens, token_logprobs, top_logprobs}} of a completions choice, or null when absent. */
    private static TokenLogprob[] logprobs(JsonNode lp) {
        JsonNode values = lp.path("token_logprobs");
        if (!values.isArray()) {
            return null;
        }
        JsonNode tops = lp.path("top_logprobs");
        TokenLogprob[] out = new TokenLogprob[values.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode top = tops.path(i);
            int n = top.isObject() ? top.size() : 0;
            int[] ids = new int[n];
            float[] lps = new float[n];
            int k = 0;
            for (java.util.Map.Entry<String, JsonNode> e : top.properties()) {
                ids[k] = tokenId(e.getKey());
                lps[k++] = (float) e.getValue().asDouble();
            }
            out[i] = new TokenLogprob((float) values.get(i).asDouble(), ids, lps);
        }
        return out;
    }

    private static int tokenId(String token) {
        if (!token.startsWith(TOKEN_ID_PREFIX)) {
            throw new IllegalArgumentException("the engine returned an alternative token without its id ('" + token
                    + "'); Flotilla asks for return_tokens_as_token_ids (vLLM)");
        }
        return Integer.parseInt(token.substring(TOKEN_ID_PREFIX.length()));
    }

    /** Tokens this chunk adds to the completion: its ids, or one for a chunk with text but no ids. */
    int countedTokens() {
        if (tokenIds != null) {
            return tokenIds.length;
        }
        return hasChoice && finishReason == null ? 1 : 0;
    }

    static FinishReason finishReason(String engineReason) {
        if (engineReason == null) {
            return FinishReason.FINISH_REASON_UNSPECIFIED;
        }
        return switch (engineReason) {
            case "length" -> FinishReason.FINISH_REASON_LENGTH;
            case "abort" -> FinishReason.FINISH_REASON_CANCELLED;
            case "error" -> FinishReason.FINISH_REASON_ERROR;
            default -> FinishReason.FINISH_REASON_STOP; // "stop" (EOS, stop token or stop string)
        };
    }

    private static int[] tokenIds(JsonNode choice) {
        JsonNode ids = choice.path("token_ids");
        if (ids.isArray()) {
            int[] out = new int[ids.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = ids.get(i).asInt();
            }
            return out;
        }
        JsonNode tokens = choice.path("logprobs").path("tokens");
        if (tokens.isArray() && !tokens.isEmpty() && tokens.get(0).asString("").startsWith(TOKEN_ID_PREFIX)) {
            int[] out = new int[tokens.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = Integer.parseInt(tokens.get(i).asString("").substring(TOKEN_ID_PREFIX.length()));
            }
            return out;
        }
        return null;
    }
}
