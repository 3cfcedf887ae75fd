package io.flotilla.worker.engine;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The port between the worker agent and one inference engine (the built-in simulator, or an
 * adapter for vLLM, SGLang, ...). The agent talks only to this interface.
 *
 * <p>Contracts every implementation keeps:
 * <ul>
 *   <li>All methods are thread-safe.</li>
 *   <li>{@link TokenSink} and {@link KvEventListener} callbacks are made on an engine thread, must
 *       not block, and may arrive while the engine holds internal locks: a callback may call
 *       {@link RequestHandle#cancel()} but should hand anything slow to another thread.</li>
 *   <li>KV events are delivered in the exact order the engine stored, evicted and cleared blocks,
 *       numbered by a position that increases by one per {@link KvEventListener#onEvents} call,
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
     * Sets the one listener that receives KV events; set it before the first submit, since events
     * emitted while no listener is set are dropped (their positions are still used).
     */
    void setKvEventListener(KvEventListener listener);

    /**
     * Sets the one observer of executed engine steps, called on the engine thread with each step's
     * duration in milliseconds. Engines without observable steps (remote servers) never call it.
     */
    default void setStepListener(java.util.function.DoubleConsumer stepMs) {
    }

    /**
     * Prefill-only execution and KV import through the worker's transfer agent, for disaggregated
     * serving; empty when the engine cannot (the worker then refuses Prefill and prefills every
     * handoff locally).
     */
    default Optional<KvTransferSupport> kvTransfer() {
        return Optional.empty();
    }

    /**
     * Disaggregated serving where the engine's own KV connector moves the KV between engines (vLLM
     * {@code kv_transfer_params}); empty when the engine has no such protocol.
     */
    default Optional<EngineKvTransfer> engineKvTransfer() {
        return Optional.empty();
    }

    /** The engine's KV tiers when it has tiers below the device; empty otherwise. */
    default Optional<KvTierStatus> kvTiers() {
        return Optional.empty();
    }

    /**
     * KV capacity in blocks of {@link #blockSize()} as the engine itself reports it (vLLM's
     * {@code num_gpu_blocks}, SGLang's {@code max_total_num_tokens}); 0 while unknown. The simulated
     * engine's capacity is its configuration, so it answers 0 here and the agent advertises it as such.
     */
    default int reportedKvBlocks() {
        return 0;
    }

    /**
     * The engine's timing as learned from its own requests, when it has been measured enough to be
     * trusted; empty for engines whose timing is known otherwise (the simulator's model) or not yet learned.
     */
    default java.util.Optional<TimingEstimate> learnedTiming() {
        return java.util.Optional.empty();
    }

    /**
     * The engine's LoRA adapters; empty when it serves none. A request whose {@link EngineRequest#scope()}
     * names an adapter the engine cannot serve is an {@link InvalidRequestException}.
     */
    default Optional<AdapterStatus> adapters() {
        return Optional.empty();
    }

    /**
     * Sets the one observer called (on an engine thread, must not block) when the set of loaded adapters
     * changes, so the worker can advertise it at once rather than at its next heartbeat.
     */
    default void setAdapterListener(Runnable changed) {
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
