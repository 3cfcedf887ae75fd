package io.flotilla.worker.kv;

import com.google.protobuf.ByteString;
import io.flotilla.protocol.v1.BlockDescriptor;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.worker.agent.WorkerIdentity;
import io.flotilla.worker.engine.KvBlockRef;
import io.flotilla.worker.engine.PrefilledKv;

/**
 * Describes a pinned prefill as the {@link KvHandoff} a decode worker continues from. Pure.
 *
 * <p>Block descriptors name the source agent's region id, offset and length of each full prompt
 * block, in prefix order; the decode worker checks their seq_hashes against its own hashing of the
 * prompt and their bytes against the block pattern.
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
}
