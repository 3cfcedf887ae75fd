package io.flotilla.router.core;

import io.flotilla.router.booking.BookingLedger;
import io.flotilla.router.booking.LoadRanking;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Decision latency in process: {@code decide} alone, and the whole request-path work the shell does
 * around it (snapshot assembly from the ledger, decide, book, release), for 64 to 4,096 aggregated
 * workers and 128-block (2048-token) requests, pruned (the holders plus the 16 least-loaded workers from
 * the ledger's ranking) or scoring every worker. {@code holders}: how many workers hold part of each
 * request's prefix — {@code quarter} of the fleet (random picks, so about a fifth distinct), or a fixed
 * {@code 16} (a prefix that KV-aware routing has kept on a few workers). Every worker carries a load
 * report and bookings.
 *
 * <pre>
 * ./mvnw -o -q -pl router-service -Pjmh test-compile exec:exec \
 *     -Djmh.args="DecideBenchmark.decide -f 1 -wi 2 -i 3 -w 1s -r 2s"
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class DecideBenchmark {

    private static final int BLOCK_SIZE = 16;
    private static final int REQUEST_BLOCKS = 128;
    private static final int REQUESTS = 1024;
    private static final WorkerTiming TIMING =
            new WorkerTiming(4.209989e-7, 1.518344e-2, 16.50142, -25.74, 54.01, 5.74, 1);

    @Param({"64", "256", "1024", "4096"})
    public int workers;

    @Param({"true", "false"})
    public boolean pruned;

    @Param({"quarter", "16"})
    public String holders;

    private RoutingPolicy policy;
    private BookingLedger ledger;
    private List<WorkerView> views;
    private RoutingRequest[] requests;
    private ClusterSnapshot[] snapshots;
    private Map<String, Integer>[] matches;
    private Set<Signal> required;
    private int next;
    private final Instant now = Instant.parse("2025-01-01T00:00:00Z");

    @Setup(Level.Trial)
    @SuppressWarnings("unchecked")
    public void setUp() {
        Random rnd = new Random(42);
        RouterConfig config = RouterDefaults.config()
                .withPruning(pruned ? RouterDefaults.config().pruning() : RouterConfig.Pruning.OFF);
        policy = new RoutingPolicy(config, new Random(1));
        required = EnumSet.copyOf(policy.requires());
        ledger = BookingLedger.create("bench", config);
        LoadRanking ranking = new LoadRanking(config);
        views = new ArrayList<>();
        Map<String, ActiveLoad> booked = new HashMap<>();
        for (int i = 0; i < workers; i++) {
            String id = String.format("worker-%04d", i);
            views.add(new WorkerView(id, WorkerView.Role.AGGREGATED, "model", BLOCK_SIZE, "bf16/bs16/paged",
                    id + ":7100", WorkerView.State.READY, true, Optional.of(TIMING), 16_384,
                    new LoadReport(rnd.nextInt(32), rnd.nextInt(8), rnd.nextInt(20_000), rnd.nextInt(12_000))));
            booked.put(id, new ActiveLoad(rnd.nextInt(8_000), rnd.nextInt(4), rnd.nextInt(4_000), rnd.nextInt(16)));
            ranking.put(views.get(i), booked.get(id), ActiveLoad.NONE);
            ledger.workerChanged(id, views.get(i));
        }
        java.util.TreeMap<String, WorkerView> byId = new java.util.TreeMap<>();
        views.forEach(v -> byId.put(v.id(), v));
        views = WorkersById.of(byId); // as the router's directory hands them over
        int holding = holders.equals("quarter") ? workers / 4 : Integer.parseInt(holders);
        requests = new RoutingRequest[REQUESTS];
        snapshots = new ClusterSnapshot[REQUESTS];
        matches = new Map[REQUESTS];
        for (int r = 0; r < REQUESTS; r++) {
            long[] hashes = new long[REQUEST_BLOCKS];
            for (int b = 0; b < REQUEST_BLOCKS; b++) {
                hashes[b] = rnd.nextLong();
            }
            requests[r] = new RoutingRequest("req-" + r, "model", REQUEST_BLOCKS * BLOCK_SIZE, BLOCK_SIZE, hashes,
                    Set.of(), false, 256);
            Map<String, Integer> m = new HashMap<>();
            for (int i = 0; i < holding; i++) {
                m.put(views.get(rnd.nextInt(workers)).id(), 1 + rnd.nextInt(REQUEST_BLOCKS));
            }
            matches[r] = m;
            snapshots[r] = new ClusterSnapshot(views, m, OverlapSource.INDEXER, booked, Map.of(), Map.of(), ranking);
        }
    }

    /** The pure policy: filter, score, pick. */
    @Benchmark
    public Decision decide() {
        int i = next++ & (REQUESTS - 1);
        return policy.decide(requests[i], snapshots[i]);
    }

    /** What the shell does per Route (minus I/O): snapshot from the ledger, decide, book; then Release. */
    @Benchmark
    public Decision snapshotDecideBookRelease() {
        int i = next++ & (REQUESTS - 1);
        RoutingRequest r = requests[i];
        ClusterSnapshot s = ledger.snapshot(views, r, required, matches[i], now);
        Decision d = policy.decide(r, s);
        ledger.book(r, d, now);
        ledger.release(r.requestId(), now);
        return d;
    }
}
