package io.flotilla.worker.engine;

/**
 * The outcome of a prefill run for a decode on another engine ({@link EngineKvTransfer#prefillRemote}).
 *
 * @param kvTransferParams the engine's transfer parameters (vLLM: the {@code kv_transfer_params}
 *                         object) as JSON text, passed unchanged to the decode engine
 *                         ({@code KvHandoff.engine_transfer_params})
 * @param firstTokens      the token(s) the prefill engine sampled (usually one; empty when the engine
 *                         returns no ids). The decode engine samples its own first token.
 * @param promptTokens     prompt length as the engine counted it
 * @param cachedTokens     prompt tokens the prefill engine found in its prefix cache
 */
public record RemotePrefill(String kvTransferParams, int[] firstTokens, int promptTokens, int cachedTokens) {
}
