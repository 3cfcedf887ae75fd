package io.flotilla.worker.engine;

/**
 * What an engine offers for disaggregated serving when the worker agent moves its KV bytes (ARCHITECTURE
 * "Disaggregated (prefill first)"): prefill-only execution that leaves the prompt's blocks pinned, and
 * import of blocks computed elsewhere followed by decoding from a given first token.
 *
 * <p>Contracts:
 * <ul>
 *   <li>Every block the engine describes ({@link KvBlockRef}) lies in a memory region it obtained from
 *       the {@link KvMemory} given to {@link #useKvMemory}; a pinned block's bytes do not change until
 *       its pin is released, and a reserved import slot is written by nobody but the importer.</li>
 *   <li>Block identity is the engine's: seq_hashes from the worker's block-hash namespace.</li>
 *   <li>All methods are thread-safe; callbacks follow the {@link Engine} rules.</li>
 * </ul>
 */
public interface KvTransferSupport extends EngineFeature {

    /**
     * Makes the engine keep its KV payload in regions obtained from {@code memory}, so that a transfer
     * agent can read and write them. Call once, before the first request.
     *
     * @throws IllegalStateException when the engine already allocated KV memory
     */
    void useKvMemory(KvMemory memory);

    /** Bytes of one KV block's payload. */
    int kvBytesPerBlock();

    /**
     * Prefill only: computes {@code request}'s prompt KV, samples the first token exactly as
     * {@link Engine#submit} would, and instead of freeing the prompt's full blocks pins them;
     * {@code sink} then gets {@link PrefillSink#onPrefilled} with the pin. {@code request.maxTokens()}
     * is ignored (one token is produced).
     *
     * @throws InvalidRequestException, EngineOverloadedException, EngineUnavailableException as {@link Engine#submit}
     */
    RequestHandle prefill(EngineRequest request, PrefillSink sink);

    /**
     * Reserves room for the first {@code blocks} full blocks of {@code promptTokens}, hashed in {@code scope}
     * (the request's {@link EngineRequest#scope()}): blocks already
     * resident are referenced (so they stay), the others get fresh unregistered slots that the caller
     * fills through {@link KvImport#toFetch()} and then commits or aborts.
     *
     * @throws EngineOverloadedException when the pool cannot hold the blocks now
     * @throws EngineUnavailableException when the engine is closed
     */
    KvImport beginImport(int[] promptTokens, io.flotilla.protocol.hash.KvScope scope, int blocks);

    /**
     * Continues {@code request} from a first token sampled elsewhere, with the sampler stream
     * {@code rngState}: {@code sink} gets {@code firstToken} at once (on the calling thread), then the
     * tokens from index 1 on. When the first token already ends the request (max tokens 1, a stop
     * token, eos) {@code sink} gets {@code onFinish} at once and nothing is queued. The request's KV
     * starts from the committed {@code imported} blocks (whose references it takes over; may be null),
     * and whatever else of the prompt is missing is computed locally.
     *
     * @throws IllegalArgumentException when {@code imported} is not committed
     * @throws InvalidRequestException, EngineOverloadedException, EngineUnavailableException as {@link Engine#submit}
     *         (then {@code imported} is left to the caller to abort)
     */
    RequestHandle submitContinuation(EngineRequest request, int firstToken, long rngState, KvImport imported,
                                     TokenSink sink);
}
