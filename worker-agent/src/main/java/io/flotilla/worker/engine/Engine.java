package io.flotilla.worker.engine;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The port between the worker agent and one inference engine (the built-in simulator, llama.cpp in process, or
 * an adapter for vLLM, SGLang, ...). The agent talks only to this interface. It is the core every engine
 * implements; what only some engines can do (KV transfer, tiers, LoRA adapters, self-reported capacity and timing)
 * is an {@link EngineFeature} found with {@link #feature(Class)}, and the observers an engine calls are given to it
 * when it is built ({@link EngineListeners}), never set afterwards.
 *
 * <p>Contracts every implementation keeps:
 * <ul>
 *   <li>All methods are thread-safe.</li>
 *   <li>{@link TokenSink} and {@link EngineListeners} callbacks are made on an engine thread, must
 *       not block, and may arrive while the engine holds internal locks: a callback may call
 *       {@link RequestHandle#cancel()} but should hand anything slow to another thread.</li>
 *   <li>KV events are delivered in the exact order the engine stored, evicted and cleared blocks,
 *       numbered by a position that increases by one per {@link KvEventListener#onEvents} call
 *       (from 1, including batches emitted while the engine was being built),
 *       and {@link #residentBlocks()} names the position its snapshot corresponds to.</li>
 * </ul>
 */
public interface Engine extends AutoCloseable {

    /**
     * Queues a request. Tokens, then exactly one of {@code onFinish} or {@code onError}, go to
     * {@code sink}.
     *
     * @throws InvalidRequestException     the request can never run here (empty prompt, token ids
     *                                     outside the vocabulary, longer than the context, ...)
     * @throws EngineOverloadedException   the waiting queue is full; retry elsewhere or later
     * @throws EngineUnavailableException  the engine is draining or closed
     */
    RequestHandle submit(EngineRequest request, TokenSink sink);

    /**
     * The sequence hashes of every block now resident (referenced or cached), taken atomically
     * with the position of the last KV event batch whose effects it includes.
     */
    ResidentBlocks residentBlocks();

    /** Count and XOR per tier of {@link #residentBlocks()}, without copying it. */
    default KvDigest kvDigest() {
        return KvDigest.of(residentBlocks());
    }

    /**
     * The sampling features this engine honours (advertised to the gateway through membership). A
     * request that uses a feature not listed is refused by the worker with INVALID_ARGUMENT.
     */
    default io.flotilla.protocol.v1.EngineCapabilities capabilities() {
        return io.flotilla.protocol.v1.EngineCapabilities.getDefaultInstance();
    }

    /** Current load, for load reports and routing. */
    EngineLoad load();

    /** Block size in tokens; KV events and snapshots are hashed with it. */
    int blockSize();

    /**
     * Drops every cached block that no sequence references and emits the matching events
     * ({@code AllBlocksCleared} when nothing stays resident, else {@code BlockRemoved}).
     *
     * @return how many blocks were dropped
     */
    int clearCache();

    /**
     * The optional capability {@code type} when this engine has it (now: a simulated engine transfers KV only when it
     * carries payloads); empty otherwise. The default answers with this engine itself when it implements
     * {@code type}; an engine whose features depend on its configuration or live in other objects overrides it.
     */
    default <F extends EngineFeature> Optional<F> feature(Class<F> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
    }

    /**
     * How the engine keeps tenants' KV apart ({@link EngineRequest#scope()}'s salt). An engine that
     * cannot ({@code NONE}) gets no salted request: the worker refuses them.
     */
    default io.flotilla.protocol.v1.TenantIsolation tenantIsolation() {
        return io.flotilla.protocol.v1.TenantIsolation.TENANT_ISOLATION_NONE;
    }

    /**
     * Whether the engine can serve now. An in-process engine is healthy while it is open; an
     * adapter for an external server answers from its last health checks (see the adapter), so
     * this is cheap and never blocks. The agent publishes UNHEALTHY while it is false, which takes
     * the worker out of the routable set without dropping its KV state.
     */
    default boolean healthy() {
        return true;
    }

    /**
     * Stops admitting requests ({@code submit} then throws {@link EngineUnavailableException}) and
     * lets in-flight work finish.
     *
     * @return completes when no request is running or waiting
     */
    CompletableFuture<Void> drain();

    /** Stops the engine; in-flight requests get {@code onError(EngineUnavailableException)}. */
    @Override
    void close();
}
