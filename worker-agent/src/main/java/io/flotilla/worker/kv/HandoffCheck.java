package io.flotilla.worker.kv;

import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.worker.identity.WorkerIdentity;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Whether a decode worker can use a handoff at all, before anything is reserved or moved. Pure.
 * The source epoch is checked again against the transfer agent's metadata when the blocks are
 * pulled ({@link KvPuller}); a restarted source is another agent and refuses the read anyway.
 */
public final class HandoffCheck {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private HandoffCheck() {
    }

    /**
     * For a worker that pulls the handoff's blocks through its transfer agent.
     *
     * @throws HandoffFailure naming the first incompatibility
     */
    public static void check(KvHandoff h, GenerateRequest request, WorkerIdentity self, long nowMs) throws HandoffFailure {
        checkIdentity(h, self, nowMs);
        if (!h.getEngineTransferParams().isEmpty()) {
            throw new HandoffFailure("unsupported", "engine-native KV transfer is not supported by this worker's engine");
        }
        int prompt = request.getTokenIdsCount();
        checkComputed(h, prompt);
        if ((long) h.getBlocksCount() * self.blockSize() > prompt) {
            throw new HandoffFailure("prompt", "handoff has " + h.getBlocksCount() + " blocks, more than a prompt of "
                    + prompt + " tokens holds");
        }
    }

    /**
     * For a worker whose engine pulls the KV itself ({@link EngineHandoffs}): the handoff must carry the
     * prefill engine's transfer parameters as a JSON object.
     *
     * @throws HandoffFailure naming the first incompatibility
     */
    public static void checkEngineTransfer(KvHandoff h, GenerateRequest request, WorkerIdentity self, long nowMs)
            throws HandoffFailure {
        checkIdentity(h, self, nowMs);
        String params = h.getEngineTransferParams();
        if (params.isEmpty()) {
            throw new HandoffFailure("engine_params", "handoff carries no engine transfer params (its KV moves through "
                    + "Flotilla's transfer agent); this worker's engine pulls KV itself");
        }
        if (!isJsonObject(params)) {
            throw new HandoffFailure("engine_params", "handoff engine transfer params are not a JSON object");
        }
        checkComputed(h, request.getTokenIdsCount());
    }

    private static void checkIdentity(KvHandoff h, WorkerIdentity self, long nowMs) throws HandoffFailure {
        if (!h.getModel().equals(self.model())) {
            throw new HandoffFailure("model", "handoff is for model '" + h.getModel() + "', this worker serves '"
                    + self.model() + "'");
        }
        if (!h.getKvLayout().equals(self.kvLayout())) {
            throw new HandoffFailure("kv_layout", "handoff KV layout '" + h.getKvLayout() + "' differs from this worker's '"
                    + self.kvLayout() + "'");
        }
        if (h.getBlockSize() != self.blockSize()) {
            throw new HandoffFailure("block_size", "handoff block size " + h.getBlockSize() + " differs from this worker's "
                    + self.blockSize());
        }
        if (h.getSourceEpoch() == 0 || h.getSourceWorkerId().isEmpty()) {
            throw new HandoffFailure("epoch", "handoff names no source worker epoch");
        }
        if (h.getSourceWorkerId().equals(self.id())) {
            throw new HandoffFailure("epoch", "handoff comes from this worker itself");
        }
        if (h.getLeaseExpiryMs() <= nowMs) {
            throw new HandoffFailure("lease_expired", "handoff lease " + h.getLeaseId() + " expired "
                    + (nowMs - h.getLeaseExpiryMs()) + " ms ago");
        }
    }

    private static void checkComputed(KvHandoff h, int prompt) throws HandoffFailure {
        if (h.getComputedTokens() != prompt) {
            throw new HandoffFailure("prompt", "handoff computed " + h.getComputedTokens() + " tokens, the prompt has " + prompt);
        }
    }

    private static boolean isJsonObject(String json) {
        try {
            return JSON.readTree(json).isObject();
        } catch (JacksonException e) {
            return false;
        }
    }
}
