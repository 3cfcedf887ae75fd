package io.flotilla.indexer.core;

import io.flotilla.protocol.v1.BlockRemoved;
import io.flotilla.protocol.v1.BlockStored;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.StoredBlock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.concurrent.TimeUnit;

/**
 * Apply rate on one thread, in block events per second, at a steady 1 M resident pairs: each worker
 * keeps a sliding window of its newest 15 625 private blocks, so every stored block comes with one
 * removed block (an engine at capacity evicting its oldest).
 *
 * <ul>
 *   <li>{@code index}: straight into {@link PrefixIndex} (the data structure alone);</li>
 *   <li>{@code applier}: protobuf {@link KvEventBatch}es through {@link KvEventApplier} (cursor,
 *       lease check, counters), 64 batches of 16 stored + 16 removed blocks per invocation; building
 *       the batches is excluded (Level.Invocation setup; parsing is the Kafka deserializer's job).</li>
 * </ul>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class ApplyRateBenchmark {

    static final int PER_BATCH = 16;

    /** Shared steady-state content: worker w holds private blocks [next[w] - 15625, next[w]). */
    @State(Scope.Thread)
    public static class Steady {
        PrefixIndex index;
        KvEventApplier applier;
        final long[] next = new long[IndexFixtures.WORKERS];
        final long[] seq = new long[IndexFixtures.WORKERS];
        final String[] names = new String[IndexFixtures.WORKERS];
        int worker;
        KvEventBatch[] batches;

        @Setup(Level.Trial)
        public void fill() {
            index = new PrefixIndex(1 << 20);
            applier = new KvEventApplier(index, new ApplierSettings(Long.MAX_VALUE / 4, 4096, 5_000, 600_000, 8));
            for (int w = 0; w < IndexFixtures.WORKERS; w++) {
                long[] blocks = new long[IndexFixtures.PER_WORKER];
                for (int i = 0; i < blocks.length; i++) {
                    blocks[i] = IndexFixtures.privateBlock(w, i);
                }
                next[w] = blocks.length;
                seq[w] = 1;
                // registers the worker (epoch w + 1) and loads its window as of seq 1
                applier.onStatus(KvInputsForBench.ready(IndexFixtures.worker(w), w + 1), 0);
                applier.onSnapshot(KvInputsForBench.snapshot(IndexFixtures.worker(w), w + 1, 1, blocks), 0);
                names[w] = IndexFixtures.worker(w);
            }
        }

        /** The next batch of worker w: 16 new blocks stored, its 16 oldest removed. */
        KvEventBatch nextBatch(int w) {
            BlockStored.Builder stored = BlockStored.newBuilder();
            BlockRemoved.Builder removed = BlockRemoved.newBuilder();
            for (int i = 0; i < PER_BATCH; i++) {
                long n = next[w]++;
                stored.addBlocks(StoredBlock.newBuilder().setSeqHash(IndexFixtures.privateBlock(w, n)));
                removed.addSeqHashes(IndexFixtures.privateBlock(w, n - IndexFixtures.PER_WORKER));
            }
            return KvEventBatch.newBuilder().setWorkerId(IndexFixtures.worker(w)).setEpoch(w + 1).setSeq(++seq[w])
                    .setTs(0)
                    .addEvents(KvEvent.newBuilder().setStored(stored))
                    .addEvents(KvEvent.newBuilder().setRemoved(removed))
                    .build();
        }

        @Setup(Level.Invocation)
        public void prepareBatches() {
            if (batches == null) {
                batches = new KvEventBatch[IndexFixtures.WORKERS];
            }
            for (int w = 0; w < IndexFixtures.WORKERS; w++) {
                batches[w] = nextBatch(w);
            }
        }
    }

    /**
     * 16 stores + 16 removes straight into the index's device tier by worker id (the id's slot looked up each time, as
     * the applier's path does); {@code Steady.prepareBatches} also runs but is untimed.
     */
    @Benchmark
    @OperationsPerInvocation(2 * PER_BATCH * IndexFixtures.WORKERS)
    public long index(Steady s) {
        long changed = 0;
        for (int w = 0; w < IndexFixtures.WORKERS; w++) {
            String worker = s.names[w];
            KvEventBatch b = s.batches[w]; // use the same hashes the applier path would
            BlockStored stored = b.getEvents(0).getStored();
            BlockRemoved removed = b.getEvents(1).getRemoved();
            for (int i = 0; i < PER_BATCH; i++) {
                changed += s.index.store(worker, stored.getBlocks(i).getSeqHash()) ? 1 : 0;
                changed += s.index.remove(worker, removed.getSeqHashes(i)) ? 1 : 0;
            }
        }
        return changed;
    }

    @Benchmark
    @OperationsPerInvocation(2 * PER_BATCH * IndexFixtures.WORKERS)
    public Outcome applier(Steady s) {
        Outcome last = null;
        for (int w = 0; w < IndexFixtures.WORKERS; w++) {
            last = s.applier.onBatch(s.batches[w], 1);
        }
        if (last.verdict() != Verdict.APPLIED) {
            throw new IllegalStateException("batch not applied: " + last);
        }
        return last;
    }
}
