package io.flotilla.indexer.core;

import io.flotilla.protocol.v1.AllBlocksCleared;
import io.flotilla.protocol.v1.BlockRemoved;
import io.flotilla.protocol.v1.BlockStored;
import io.flotilla.protocol.v1.IndexDigest;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.StoredBlock;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;

import java.util.Collection;

/** Builders for the protobuf inputs of the applier, with literal values. */
final class KvInputs {

    private KvInputs() {
    }

    static KvEventBatch batch(String worker, long epoch, long seq, long ts, KvEvent... events) {
        KvEventBatch.Builder b = KvEventBatch.newBuilder().setWorkerId(worker).setEpoch(epoch).setSeq(seq).setTs(ts)
                .setBlockSize(16).setModel("m");
        for (KvEvent e : events) {
            b.addEvents(e);
        }
        return b.build();
    }

    /** Blocks stored in prefix order; the parent is 0 (the index ignores it). */
    static KvEvent stored(long... seqHashes) {
        return stored(KvTier.KV_TIER_DEVICE, seqHashes);
    }

    static KvEvent stored(KvTier tier, long... seqHashes) {
        BlockStored.Builder s = BlockStored.newBuilder().setTier(tier);
        for (long h : seqHashes) {
            s.addBlocks(StoredBlock.newBuilder().setSeqHash(h).setLocalHash(h * 31));
        }
        return KvEvent.newBuilder().setStored(s).build();
    }

    static KvEvent removed(long... seqHashes) {
        return removed(KvTier.KV_TIER_DEVICE, seqHashes);
    }

    static KvEvent removed(KvTier tier, long... seqHashes) {
        BlockRemoved.Builder r = BlockRemoved.newBuilder().setTier(tier);
        for (long h : seqHashes) {
            r.addSeqHashes(h);
        }
        return KvEvent.newBuilder().setRemoved(r).build();
    }

    /** Every tier cleared (no tier: the meaning before tiers). */
    static KvEvent cleared() {
        return KvEvent.newBuilder().setCleared(AllBlocksCleared.getDefaultInstance()).build();
    }

    static KvEvent cleared(KvTier tier) {
        return KvEvent.newBuilder().setCleared(AllBlocksCleared.newBuilder().setTier(tier)).build();
    }

    static WorkerStatus ready(String worker, long epoch, long ts, int leaseMs) {
        return status(worker, epoch, ts, leaseMs, WorkerState.WORKER_STATE_READY);
    }

    static WorkerStatus stopped(String worker, long epoch, long ts) {
        return status(worker, epoch, ts, 1000, WorkerState.WORKER_STATE_STOPPED);
    }

    static WorkerStatus status(String worker, long epoch, long ts, int leaseMs, WorkerState state) {
        return WorkerStatus.newBuilder().setWorkerId(worker).setEpoch(epoch).setTs(ts).setLeaseMs(leaseMs)
                .setState(state).setBlockSize(16).setModel("m").build();
    }

    static WorkerLoad load(String worker, long epoch, long count, long xor, long kvSeq) {
        return WorkerLoad.newBuilder().setWorkerId(worker).setEpoch(epoch).setTs(0)
                .setIndexDigest(IndexDigest.newBuilder().setCount(count).setXor(xor).setKvSeq(kvSeq)).build();
    }

    static KvSnapshot snapshot(String worker, long epoch, long seq, long... seqHashes) {
        KvSnapshot.Builder b = KvSnapshot.newBuilder().setWorkerId(worker).setEpoch(epoch).setSeq(seq)
                .setBlockSize(16).setModel("m");
        for (long h : seqHashes) {
            b.addSeqHashes(h);
        }
        return b.build();
    }

    static KvSnapshot snapshot(String worker, long epoch, long seq, Collection<Long> seqHashes) {
        return snapshot(worker, epoch, seq, seqHashes.stream().mapToLong(Long::longValue).toArray());
    }

    /** A snapshot of every tier. */
    static KvSnapshot snapshot(String worker, long epoch, long seq, Collection<Long> device, Collection<Long> host,
                               Collection<Long> disk) {
        return snapshot(worker, epoch, seq, device).toBuilder().addAllHostSeqHashes(host).addAllDiskSeqHashes(disk).build();
    }

    /** A load report whose digest covers every tier: counts and XORs, device, host, disk. */
    static WorkerLoad load(String worker, long epoch, long kvSeq, long[] counts, long[] xors) {
        return WorkerLoad.newBuilder().setWorkerId(worker).setEpoch(epoch).setTs(0)
                .setIndexDigest(IndexDigest.newBuilder().setCount(counts[0]).setXor(xors[0]).setKvSeq(kvSeq)
                        .setHostCount(counts[1]).setHostXor(xors[1]).setDiskCount(counts[2]).setDiskXor(xors[2]))
                .build();
    }

    static long xorOf(long... hashes) {
        long x = 0;
        for (long h : hashes) {
            x ^= h;
        }
        return x;
    }
}
