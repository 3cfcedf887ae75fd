package io.flotilla.worker.engine;

import java.util.List;

/**
 * A prompt whose KV an engine computed and pinned for a transfer.
 *
 * @param requestId    the prefill request
 * @param firstToken   the first generated token (output token 0)
 * @param rngState     the sampler stream; a decoder continues at output token 1 of it
 * @param promptTokens prompt length
 * @param cachedTokens prompt tokens already resident when the prefill was scheduled
 * @param blocks       the prompt's full blocks in prefix order (block i covers tokens [i·bs, (i+1)·bs))
 * @param pin          holds {@code blocks}; the receiver of this record must release it
 */
public record PrefilledKv(String requestId, int firstToken, long rngState, int promptTokens, int cachedTokens,
                          List<KvBlockRef> blocks, KvPin pin) {

    public PrefilledKv {
        blocks = List.copyOf(blocks);
    }
}
