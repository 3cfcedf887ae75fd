package io.flotilla.worker.api;

import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.worker.kv.TransferMeters;

/**
 * What serving requests reports to the worker's meters; the worker's metrics implement it, so this package does not
 * depend on the one that assembles the worker.
 */
public interface GenerationMeters extends TransferMeters {

    /** A handoff was refused before anything moved (incompatible, expired, unsupported). */
    void handoffRefused(String reason);

    /** An accepted handoff failed before the first decoded token (capacity, transfer, verification). */
    void handoffFallback(String reason);

    /** A request continued from a prefill worker's KV handoff. */
    void handoffUsed();

    /**
     * @param importedTokens prompt tokens whose KV came from a prefill worker's handoff: neither a prefix hit nor
     *                       computed here
     */
    void requestFinished(int promptTokens, int cachedTokens, int importedTokens);

    /** A tenant-salted request was accepted; {@code publicBlocks} of its blocks are an allow-listed public prefix. */
    void saltedRequest(int publicBlocks, TenantIsolation isolation);

    /**
     * A request's cache scope was refused (its engine cannot keep tenants apart, or the scope is malformed);
     * {@code code} is the transport's name for the refusal (the gRPC status code).
     */
    void scopeRefused(String code);

    /** An Embed call answered: {@code inputs} vectors of {@code tokens} tokens in all. */
    void embedded(int inputs, int tokens);
}
