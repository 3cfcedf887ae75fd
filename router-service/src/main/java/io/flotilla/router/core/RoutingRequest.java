package io.flotilla.router.core;

import java.util.Objects;
import java.util.Set;

/**
 * One request to route. The seq hashes cover the prompt's full blocks (block identity in
 * ARCHITECTURE.md); they are computed with {@code blockSize}, so only workers with that block size
 * can be compared. Immutable by contract: callers must not modify {@code seqHashes} after building.
 *
 * @param islTokens   prompt length in tokens
 * @param exclude     worker ids that must not be chosen (e.g. the worker that failed mid-stream)
 * @param allowDisagg whether a separate prefill worker may be named
 * @param oslHint     expected output tokens, 0 when unknown; used to book decode blocks
 * @param loraName    LoRA adapter the request runs on, "" for the base model
 * @param tenantSalted whether its KV is private to its tenant (the seq hashes are then salted, so they
 *                    match only the tenant's own blocks and any public prefix)
 * @param embed       an embedding request: only workers that embed are eligible; it brings no seq hashes
 */
public record RoutingRequest(String requestId, String model, int islTokens, int blockSize, long[] seqHashes,
                             Set<String> exclude, boolean allowDisagg, int oslHint, String loraName,
                             boolean tenantSalted, boolean embed) {

    /** A generation request. */
    public RoutingRequest(String requestId, String model, int islTokens, int blockSize, long[] seqHashes,
                          Set<String> exclude, boolean allowDisagg, int oslHint, String loraName, boolean tenantSalted) {
        this(requestId, model, islTokens, blockSize, seqHashes, exclude, allowDisagg, oslHint, loraName, tenantSalted,
                false);
    }

    /** A base-model request whose KV is shared across tenants. */
    public RoutingRequest(String requestId, String model, int islTokens, int blockSize, long[] seqHashes,
                          Set<String> exclude, boolean allowDisagg, int oslHint) {
        this(requestId, model, islTokens, blockSize, seqHashes, exclude, allowDisagg, oslHint, "", false);
    }

    public RoutingRequest {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(model, "model");
        loraName = loraName == null ? "" : loraName;
        seqHashes = seqHashes == null ? new long[0] : seqHashes;
        exclude = exclude == null ? Set.of() : Set.copyOf(exclude);
        if (islTokens < 0 || oslHint < 0) {
            throw new IllegalArgumentException("isl and osl must not be negative");
        }
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be positive: " + blockSize);
        }
    }

    /** A request of no tokens for {@code model}: load and busy views that do not depend on a prompt. */
    public static RoutingRequest probe(String model, int blockSize) {
        return new RoutingRequest("probe", model, 0, blockSize, null, null, false, 0);
    }

    /** KV blocks the request references on its decode worker, prefix included: ⌈(isl + osl) / blockSize⌉. */
    public int bookedBlocks() {
        return (int) (((long) islTokens + oslHint + blockSize - 1) / blockSize);
    }

    /** Prompt tokens already cached given {@code overlapBlocks} matched blocks: min(overlap · bs, isl). */
    public int cachedTokens(int overlapBlocks) {
        return (int) Math.min((long) overlapBlocks * blockSize, islTokens);
    }
}
