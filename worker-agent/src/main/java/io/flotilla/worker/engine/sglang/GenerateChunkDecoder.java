package io.flotilla.worker.engine.sglang;

import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.openai.ChunkDecoder;
import io.flotilla.worker.engine.openai.CompletionChunk;
import io.flotilla.worker.engine.openai.EngineHttpErrors;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Decodes one request's SGLang {@code /generate} stream: each {@code data:} payload is
 * {@code {"text": …, "output_ids": [...], "meta_info": {"id", "finish_reason", "prompt_tokens",
 * "completion_tokens", "cached_tokens", …}}}, then {@code [DONE]}.
 *
 * <p>SGLang streams cumulative output by default ({@code output_ids} holds every id so far; the text too)
 * and deltas with {@code --incremental-streaming-output}; this decoder relays each id once either way:
 * when {@code output_ids} is as long as {@code meta_info.completion_tokens} it is cumulative and only the
 * ids past those already relayed are new, otherwise it is the delta. Ids come from {@code output_ids},
 * whether the server also sends text or not ({@code --skip-tokenizer-init} sends none); a chunk with text
 * and no ids cannot be relayed and fails the request. {@code finish_reason} is {@code null} while
 * generating, else {@code {"type": "stop" | "length" | "abort", …}}. An {@code {"error": {…}}} payload
 * (SGLang's stream error, from a request it refused) fails the request as invalid unless it names a code.
 */
final class GenerateChunkDecoder implements ChunkDecoder {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private int relayed;

    @Override
    public CompletionChunk decode(String data) {
        JsonNode root = JSON.readTree(data);
        if (root.has("error")) {
            return new CompletionChunk(null, null, null, null, EngineHttpErrors.forStreamError(root, 400), false);
        }
        JsonNode meta = root.path("meta_info");
        JsonNode ids = root.path("output_ids");
        int completion = meta.path("completion_tokens").asInt(-1);
        int[] delta = null;
        if (ids.isArray()) {
            int from = ids.size() == completion && completion >= relayed ? relayed : 0;
            delta = new int[Math.max(0, ids.size() - from)];
            for (int i = 0; i < delta.length; i++) {
                delta[i] = ids.get(from + i).asInt();
            }
            relayed += delta.length;
        } else if (root.path("text").isString() && !root.path("text").asString().isEmpty()) {
            throw new EngineUnavailableException("SGLang streamed text without output_ids; this worker relays token ids "
                    + "(every SGLang release since 0.4 sends output_ids on /generate)");
        }
        JsonNode finish = meta.path("finish_reason");
        String reason = finish.isObject() ? finish.path("type").asString("stop") : finish.isString() ? finish.asString() : null;
        CompletionChunk.Usage usage = null;
        if (reason != null) {
            usage = new CompletionChunk.Usage(meta.path("prompt_tokens").asInt(0), Math.max(0, completion),
                    meta.path("cached_tokens").asInt(0));
        }
        return new CompletionChunk(delta, reason, usage, null, null, true);
    }
}
