package io.flotilla.worker.kv;

import com.google.protobuf.ByteString;
import io.flotilla.protocol.v1.BlockDescriptor;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.engine.KvBlockRef;
import io.flotilla.worker.engine.PrefilledKv;
import io.flotilla.worker.engine.RemotePrefill;

/**
 * Describes a pinned prefill as the {@link KvHandoff} a decode worker continues from. Pure.
 *
 * <p>Block descriptors name the source agent's region id, offset and length of each full prompt
 * block, in prefix order; the decode worker checks their seq_hashes against its own hashing of the
 * prompt and their bytes against the block pattern.
 *
 * <p>A prefill by an engine that moves the KV itself ({@link #buildEngineTransfer}) has no blocks,
 * transfer endpoint or lease: the engine's transfer parameters stand for all of them.
 */
public final class HandoffBuilder {

    private HandoffBuilder() {
    }

    public static KvHandoff build(WorkerIdentity source, PrefillRequest request, PrefilledKv kv, KvLease lease,
                                  KvRegions regions, byte[] agentMetadata) {
        KvHandoff.Builder h = KvHandoff.newBuilder()
                .setSourceWorkerId(source.id())
                .setSourceEpoch(source.epoch())
                .setSourceEndpoint(source.endpoint())
                .setTransferEndpoint(source.transferEndpoint())
                .setAgentMetadata(ByteString.copyFrom(agentMetadata))
                .setKvLayout(source.kvLayout())
                .setBlockSize(source.blockSize())
                .setModel(source.model())
                .setComputedTokens(kv.promptTokens())
                .setCachedTokens(kv.cachedTokens())
                .setFirstToken(kv.firstToken())
                .setRngState(kv.rngState())
                .setDeadlineMs(request.getDeadlineMs())
                .setLeaseId(lease.id())
                .setLeaseExpiryMs(lease.expiresAtMs());
        if (request.hasSampling()) {
            h.setSampling(request.getSampling());
        }
        if (request.hasStop()) {
            h.setStop(request.getStop());
        }
        for (KvBlockRef b : kv.blocks()) {
            h.addBlocks(BlockDescriptor.newBuilder()
                    .setSeqHash(b.seqHash())
                    .setRegionId(Math.toIntExact(regions.registrationId(b.region())))
                    .setOffset(b.offset())
                    .setLength(b.length()));
        }
        return h.build();
    }

    /**
     * A handoff for a prefill the engine ran for a remote decode; usable until {@code expiresAtMs}.
     * {@code first_token} is the prefill engine's sample, for information only: the decode engine
     * samples its own first token.
     */
    public static KvHandoff buildEngineTransfer(WorkerIdentity source, PrefillRequest request, RemotePrefill prefill,
                                                long expiresAtMs) {
        KvHandoff.Builder h = KvHandoff.newBuilder()
                .setSourceWorkerId(source.id())
                .setSourceEpoch(source.epoch())
                .setSourceEndpoint(source.endpoint())
                .setKvLayout(source.kvLayout())
                .setBlockSize(source.blockSize())
                .setModel(source.model())
                .setComputedTokens(request.getTokenIdsCount())
                .setCachedTokens(prefill.cachedTokens())
                .setDeadlineMs(request.getDeadlineMs())
                .setLeaseExpiryMs(expiresAtMs)
                .setEngineTransferParams(prefill.kvTransferParams());
        if (prefill.firstTokens().length > 0) {
            h.setFirstToken(prefill.firstTokens()[0]);
        }
        if (request.hasSampling()) {
            h.setSampling(request.getSampling());
        }
        if (request.hasStop()) {
            h.setStop(request.getStop());
        }
        return h.build();
    }
}
