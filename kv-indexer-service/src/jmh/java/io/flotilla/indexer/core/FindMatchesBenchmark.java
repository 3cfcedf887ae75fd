package io.flotilla.indexer.core;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * FindMatches latency: a 128-block query against 64 workers and 1 M resident (block, worker) pairs, or at fleet
 * size with {@code -p workers=1024 -p pairs=10000000}. SampleTime mode, so the output carries the p99.
 *
 * <ul>
 *   <li>{@code hot}: a hot prefix every worker holds in full: 128 lookups per group of 64 workers, one result per
 *       worker (worst case).</li>
 *   <li>{@code private}: one worker's private chain, at a random offset: all workers are checked
 *       on the first block (one probe per group of 64), one keeps matching for 128 blocks.</li>
 *   <li>{@code miss}: unknown hashes: one lookup.</li>
 * </ul>
 * Queries rotate over 4096 prepared chains so the caches see many different blocks.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
@State(Scope.Benchmark)
public class FindMatchesBenchmark {

    @Param({"shared"})
    public String scenario;

    @Param({"hot", "private", "miss"})
    public String query;

    @Param({"64"})
    public int workers;

    @Param({"1000000"})
    public long pairs;

    private PrefixIndex index;
    private long[][] queries;
    private int next;

    @Setup(Level.Trial)
    public void build() {
        index = IndexFixtures.index(scenario, workers, pairs);
        int perWorker = (int) (pairs / workers);
        SplittableRandom rnd = new SplittableRandom(7);
        queries = new long[4096][];
        for (int q = 0; q < queries.length; q++) {
            queries[q] = switch (query) {
                case "hot" -> IndexFixtures.hotChain(rnd.nextInt(IndexFixtures.HOT_CHAINS));
                case "private" -> IndexFixtures.privateChain(rnd.nextInt(workers),
                        rnd.nextInt(perWorker - IndexFixtures.CHAIN * IndexFixtures.HOT_CHAINS - 128));
                case "miss" -> IndexFixtures.privateChain(workers + 1000 + rnd.nextInt(1000), 0);
                default -> throw new IllegalArgumentException(query);
            };
        }
        int expected = switch (query) {
            case "hot" -> workers;
            case "private" -> 1;
            default -> 0;
        };
        if (index.findMatches(queries[0]).size() != expected) {
            throw new IllegalStateException("fixture broken: " + index.findMatches(queries[0]));
        }
    }

    @Benchmark
    public List<WorkerMatch> findMatches() {
        long[] q = queries[next];
        next = (next + 1) & (queries.length - 1);
        return index.findMatches(q);
    }
}
