package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.EngineUnavailableException;

/**
 * The outcome of a prefill run for a remote decode ({@link OpenAiHttpEngine#prefillRemote}).
 *
 * @param kvTransferParams the engine's {@code kv_transfer_params} object as JSON text, to be passed
 *                         unchanged to the decode engine ({@code KvHandoff.engine_transfer_params})
 * @param firstTokens      the token(s) the prefill engine sampled (usually one; empty when the engine
 *                         returns no ids). The decode engine samples its own first token.
 * @param promptTokens     prompt length as the engine counted it
 * @param cachedTokens     prompt tokens the prefill engine found in its prefix cache
 */
public record RemotePrefill(String kvTransferParams, int[] firstTokens, int promptTokens, int cachedTokens) {

    /** Reads the engine's non-streamed response; throws an {@code EngineException} for errors or missing params. */
    static RemotePrefill fromResponse(String json) {
        CompletionChunk c = CompletionChunk.parse(json);
        if (c.error() != null) {
            throw c.error();
        }
        if (c.kvTransferParams() == null) {
            throw new EngineUnavailableException("engine returned no kv_transfer_params; is it started with --kv-transfer-config?");
        }
        CompletionChunk.Usage u = c.usage() == null ? new CompletionChunk.Usage(0, 0, 0) : c.usage();
        return new RemotePrefill(c.kvTransferParams(), c.tokenIds() == null ? new int[0] : c.tokenIds(),
                u.promptTokens(), u.cachedTokens());
    }
}
