package io.flotilla.worker.engine;

import java.util.concurrent.CompletableFuture;

/**
 * Disaggregated prefill/decode where the engines move the KV themselves (vLLM's
 * {@code kv_transfer_params} protocol with NixlConnector or a compatible connector): the agent never
 * touches KV bytes; it carries the prefill engine's opaque transfer parameters to the decode engine
 * in {@code KvHandoff.engine_transfer_params}.
 *
 * <p>Contract: the same request id is used on both engines; the prefill engine keeps the prompt's
 * blocks until the decode engine has read them or its own timeout frees them (vLLM:
 * {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT}); the agent holds no lease on them.
 */
public interface EngineKvTransfer extends EngineFeature {

    /**
     * Runs the prefill of {@code request} for a decode on another engine.
     *
     * @return completes with the engine's transfer parameters, or exceptionally with an
     *         {@link EngineException} (also when the engine returned none: it has no KV connector);
     *         cancelling the future abandons the prefill
     * @throws InvalidRequestException, EngineUnavailableException what can be known at once
     */
    CompletableFuture<RemotePrefill> prefillRemote(EngineRequest request);

    /**
     * Like {@link Engine#submit}, with the prompt's KV pulled by the engine from the prefill engine that
     * {@code kvTransferParams} (from {@link RemotePrefill#kvTransferParams()}) names.
     *
     * @throws InvalidRequestException also when {@code kvTransferParams} is not a JSON object
     */
    RequestHandle submitWithKvTransfer(EngineRequest request, String kvTransferParams, TokenSink sink);
}
