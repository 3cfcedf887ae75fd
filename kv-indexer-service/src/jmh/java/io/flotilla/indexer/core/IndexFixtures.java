package io.flotilla.indexer.core;

import java.util.ArrayList;
import java.util.List;

/**
 * Deterministic index contents for the benchmarks: by default 64 workers and 1 M resident (block, worker) pairs; the
 * overloads that take a worker and pair count build the same shapes at fleet size (1,024 workers, 10 M pairs).
 *
 * <ul>
 *   <li>{@code unique}: every pair is its own block (no sharing between workers): the largest table,
 *       the worst case for memory and cache misses.</li>
 *   <li>{@code shared}: 16 hot 128-block prefixes (system prompts) held by every worker, the rest of
 *       each worker's 15 625 pairs unique to it.</li>
 * </ul>
 * Block hashes are SplitMix64 outputs, like real XXH3 seq hashes: uniformly spread 64-bit values.
 */
final class IndexFixtures {

    static final int WORKERS = 64;
    static final int PAIRS = 1_000_000;
    static final int PER_WORKER = PAIRS / WORKERS; // 15 625
    static final int CHAIN = 128;
    static final int HOT_CHAINS = 16;

    private IndexFixtures() {
    }

    static String worker(int w) {
        return "worker-" + w;
    }

    /** The i-th private block of worker w. */
    static long privateBlock(int w, long i) {
        return mix(((long) w << 40) | i);
    }

    static long hotBlock(int chain, int i) {
        return mix(0x7000_0000_0000L | ((long) chain << 16) | i);
    }

    static long[] hotChain(int chain) {
        long[] c = new long[CHAIN];
        for (int i = 0; i < CHAIN; i++) {
            c[i] = hotBlock(chain, i);
        }
        return c;
    }

    /** A 128-block query along worker w's private blocks starting at block {@code start}. */
    static long[] privateChain(int w, int start) {
        long[] c = new long[CHAIN];
        for (int i = 0; i < CHAIN; i++) {
            c[i] = privateBlock(w, start + i);
        }
        return c;
    }

    /** Per worker the blocks to hold for {@code scenario} ("unique" or "shared"). */
    static List<long[]> holdings(String scenario) {
        return holdings(scenario, WORKERS, PAIRS);
    }

    /** As {@link #holdings(String)}, for {@code workers} workers holding {@code pairs} pairs in all. */
    static List<long[]> holdings(String scenario, int workers, long pairs) {
        int perWorker = Math.toIntExact(pairs / workers);
        if (scenario.equals("shared") && perWorker < HOT_CHAINS * CHAIN + CHAIN) {
            throw new IllegalArgumentException(perWorker + " pairs per worker do not fit the hot prefixes and a private chain");
        }
        List<long[]> out = new ArrayList<>(workers);
        for (int w = 0; w < workers; w++) {
            long[] blocks = new long[perWorker];
            int n = 0;
            if (scenario.equals("shared")) {
                for (int c = 0; c < HOT_CHAINS; c++) {
                    for (int i = 0; i < CHAIN; i++) {
                        blocks[n++] = hotBlock(c, i);
                    }
                }
            } else if (!scenario.equals("unique")) {
                throw new IllegalArgumentException(scenario);
            }
            for (long i = 0; n < perWorker; i++) {
                blocks[n++] = privateBlock(w, i);
            }
            out.add(blocks);
        }
        return out;
    }

    /** An index holding {@link #holdings}, filled through the public writer API. */
    static PrefixIndex index(String scenario) {
        return index(scenario, WORKERS, PAIRS);
    }

    /** As {@link #index(String)}, at {@code workers} workers and {@code pairs} pairs. */
    static PrefixIndex index(String scenario, int workers, long pairs) {
        PrefixIndex index = new PrefixIndex(1 << 20);
        List<long[]> holdings = holdings(scenario, workers, pairs);
        for (int w = 0; w < workers; w++) {
            for (long h : holdings.get(w)) {
                index.store(worker(w), h);
            }
        }
        return index;
    }

    /** The same content as an index snapshot (epoch w + 1, cursor 1000). */
    static IndexSnapshot snapshot(String scenario) {
        List<long[]> holdings = holdings(scenario);
        List<WorkerSnapshot> workers = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            workers.add(new WorkerSnapshot(worker(w), w + 1, 1000, 0, true, holdings.get(w)));
        }
        return new IndexSnapshot(0, workers);
    }

    static long mix(long z) {
        z += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
