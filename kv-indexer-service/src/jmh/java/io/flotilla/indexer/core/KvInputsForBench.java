package io.flotilla.indexer.core;

import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;

/** Protobuf inputs for the benchmarks. */
final class KvInputsForBench {

    private KvInputsForBench() {
    }

    /** READY at ts 0 with a lease of about 11 days: nothing expires during a benchmark. */
    static WorkerStatus ready(String worker, long epoch) {
        return WorkerStatus.newBuilder().setWorkerId(worker).setEpoch(epoch).setTs(0).setLeaseMs(1_000_000_000)
                .setState(WorkerState.WORKER_STATE_READY).build();
    }

    static KvSnapshot snapshot(String worker, long epoch, long seq, long[] seqHashes) {
        KvSnapshot.Builder b = KvSnapshot.newBuilder().setWorkerId(worker).setEpoch(epoch).setSeq(seq);
        for (long h : seqHashes) {
            b.addSeqHashes(h);
        }
        return b.build();
    }
}
