package io.flotilla.worker.engine.openai;

/**
 * Turns one SSE {@code data:} payload of an engine's generation stream into a {@link CompletionChunk}
 * carrying only the tokens that payload adds. One decoder per request: engines that stream cumulative
 * output (SGLang's {@code /generate} by default) need to remember what was already relayed.
 */
@FunctionalInterface
public interface ChunkDecoder {

    CompletionChunk decode(String data);

    /** OpenAI's {@code text_completion} chunks (vLLM, SGLang's OpenAI server): each chunk is a delta. */
    ChunkDecoder OPENAI = CompletionChunk::parse;
}
