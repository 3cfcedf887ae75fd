package io.flotilla.worker.kv;

import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.worker.agent.WorkerIdentity;

/**
 * Whether a decode worker can use a handoff at all, before anything is reserved or moved. Pure.
 * The source epoch is checked again against the transfer agent's metadata when the blocks are
 * pulled ({@link KvPuller}); a restarted source is another agent and refuses the read anyway.
 */
public final class HandoffCheck {

    private HandoffCheck() {
    }

    /** @throws HandoffFailure naming the first incompatibility */
    public static void check(KvHandoff h, GenerateRequest request, WorkerIdentity self, long nowMs) throws HandoffFailure {
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
        if (!h.getEngineTransferParams().isEmpty()) {
            throw new HandoffFailure("unsupported", "engine-native KV transfer is not supported by this worker's engine");
        }
        int prompt = request.getTokenIdsCount();
        if (h.getComputedTokens() != prompt) {
            throw new HandoffFailure("prompt", "handoff computed " + h.getComputedTokens() + " tokens, the prompt has " + prompt);
        }
        if ((long) h.getBlocksCount() * self.blockSize() > prompt) {
            throw new HandoffFailure("prompt", "handoff has " + h.getBlocksCount() + " blocks, more than a prompt of "
                    + prompt + " tokens holds");
        }
    }
}
