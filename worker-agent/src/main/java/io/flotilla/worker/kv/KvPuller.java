package io.flotilla.worker.kv;

import io.flotilla.protocol.v1.BlockDescriptor;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.transfer.TransferAgent;
import io.flotilla.transfer.TransferException;
import io.flotilla.transfer.TransferRequest;
import io.flotilla.transfer.XferDescList;
import io.flotilla.worker.engine.EngineException;
import io.flotilla.worker.engine.KvBlockRef;
import io.flotilla.worker.engine.KvImport;
import io.flotilla.worker.engine.KvTransferSupport;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Brings a handoff's blocks into this worker's engine: reserve room, pull the missing blocks from the
 * source agent in one batched read, verify them, commit them as resident. On any failure nothing is
 * left held and a {@link HandoffFailure} says why; on success the caller owns the committed import.
 *
 * <p>The source's metadata is loaded only when it changed since the last pull from that agent (a load
 * maps the source's shared regions). Its agent name must be {@link KvTransferNode#agentName} of the
 * handoff's source worker and epoch, so a handoff never reads from another incarnation of the source.
 */
public final class KvPuller {

    private final TransferAgent agent;
    private final KvRegions regions;
    private final KvTransferSupport engine;
    private final TransferMeters metrics;
    private final Map<String, byte[]> loaded = new HashMap<>();

    public KvPuller(TransferAgent agent, KvRegions regions, KvTransferSupport engine, TransferMeters metrics) {
        this.agent = agent;
        this.regions = regions;
        this.engine = engine;
        this.metrics = metrics;
    }

    /** @return the committed import of the handoff's blocks, which this worker hashes in {@code scope} */
    public KvImport pull(KvHandoff handoff, int[] prompt, io.flotilla.protocol.hash.KvScope scope, Duration timeout)
            throws HandoffFailure {
        String source = loadSource(handoff);
        KvImport imported;
        try {
            imported = engine.beginImport(prompt, scope, handoff.getBlocksCount());
        } catch (EngineException e) {
            throw new HandoffFailure("capacity", "cannot hold the handoff's blocks: " + e.getMessage(), e);
        }
        try {
            fetch(handoff, imported, source, timeout);
            int corrupt = imported.firstCorruptBlock();
            if (corrupt >= 0) {
                throw new HandoffFailure("verify", "block " + corrupt + " of the handoff did not verify against its seq_hash");
            }
            imported.commit();
            return imported;
        } catch (HandoffFailure | RuntimeException e) {
            imported.abort();
            if (e instanceof HandoffFailure f) {
                throw f;
            }
            throw new HandoffFailure("transfer", "pulling the handoff failed: " + e, e);
        }
    }

    private void fetch(KvHandoff handoff, KvImport imported, String source, Duration timeout) throws HandoffFailure {
        long[] mine = imported.seqHashes();
        Map<Long, BlockDescriptor> theirs = new HashMap<>();
        for (int b = 0; b < handoff.getBlocksCount(); b++) {
            BlockDescriptor d = handoff.getBlocks(b);
            if (d.getSeqHash() != mine[b]) {
                throw new HandoffFailure("identity", "handoff block " + b + " has seq_hash "
                        + Long.toUnsignedString(d.getSeqHash(), 16) + ", this worker hashes the prompt to "
                        + Long.toUnsignedString(mine[b], 16));
            }
            theirs.put(d.getSeqHash(), d);
        }
        List<KvBlockRef> wanted = imported.toFetch();
        if (wanted.isEmpty()) {
            return; // every block is resident here already
        }
        XferDescList local = XferDescList.of();
        XferDescList remote = XferDescList.of();
        for (KvBlockRef ref : wanted) {
            BlockDescriptor d = theirs.get(ref.seqHash());
            if (d.getLength() != ref.length()) {
                throw new HandoffFailure("kv_layout", "handoff blocks have " + d.getLength() + " bytes, this worker's "
                        + ref.length());
            }
            local.add(regions.registrationId(ref.region()), ref.offset(), ref.length());
            remote.add(d.getRegionId(), d.getOffset(), d.getLength());
        }
        long start = System.nanoTime();
        try (TransferRequest read = agent.read(source, local, remote, null)) {
            read.awaitDone(timeout);
        } catch (TransferException e) {
            forget(handoff);
            throw new HandoffFailure("transfer", "reading " + wanted.size() + " blocks from " + source + " failed: "
                    + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HandoffFailure("transfer", "interrupted while pulling the handoff", e);
        }
        metrics.kvTransferred(local.totalBytes(), Duration.ofNanos(System.nanoTime() - start));
    }

    /** Loads the source agent's metadata if it changed; returns the agent's name. */
    private synchronized String loadSource(KvHandoff handoff) throws HandoffFailure {
        String expected = KvTransferNode.agentName(handoff.getSourceWorkerId(), handoff.getSourceEpoch());
        byte[] md = handoff.getAgentMetadata().toByteArray();
        if (Arrays.equals(loaded.get(expected), md)) {
            return expected;
        }
        String name;
        try {
            name = agent.loadRemoteMetadata(md);
        } catch (TransferException e) {
            throw new HandoffFailure("transfer", "cannot load the source's transfer metadata: " + e.getMessage(), e);
        }
        if (!name.equals(expected)) {
            agent.invalidateRemoteMetadata(name);
            loaded.remove(name);
            throw new HandoffFailure("epoch", "the handoff's transfer agent is '" + name + "', not '" + expected
                    + "' (source epoch mismatch)");
        }
        loaded.put(name, md);
        return name;
    }

    /** Forgets a source agent (e.g. after its reads failed), so the next pull reloads its metadata. */
    public synchronized void forget(KvHandoff handoff) {
        loaded.remove(KvTransferNode.agentName(handoff.getSourceWorkerId(), handoff.getSourceEpoch()));
    }
}
