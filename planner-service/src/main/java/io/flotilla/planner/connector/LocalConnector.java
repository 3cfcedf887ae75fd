package io.flotilla.planner.connector;

import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.FleetWorker;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.protocol.Ports;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Scales a local cluster ({@code bin/flotilla up}) by asking it to start or drain workers.
 * <ul>
 *   <li>up: runs {@code bin/flotilla start-worker N} in {@code home} for the lowest free N whose role under
 *       the cluster's layout ({@link LocalLayout}) is the pool's; free = not in membership, no live
 *       process of that number in the launcher's state (starting, or drained and idle: it holds the
 *       number's ports), not being started, not drained by this planner, no failed start in the last
 *       {@link #RETRY_AFTER};</li>
 *   <li>down: {@code WorkerService.Drain} on the pool's READY workers with the fewest running requests
 *       (ties: the highest id). Never kills: the drained process stays until {@code bin/flotilla down}.</li>
 *   <li>size of a pool = its STARTING and READY workers not drained by us, plus the workers not yet in
 *       membership that are starting: our starts in flight, and processes the launcher started less
 *       than {@link #SIGHTING_GRACE} ago ({@code bin/flotilla up} itself, or a start by hand);</li>
 *   <li>hand-made changes ({@code start-worker}, {@code kill-worker}): with nothing of ours in flight for
 *       the pool, a size different from what the planner last applied is reported as changed by hand.</li>
 * </ul>
 */
public final class LocalConnector implements ScalingConnector {

    static final Duration RETRY_AFTER = Duration.ofMinutes(10);
    /**
     * A worker not yet seen in membership still counts for this long after our start command ended, or
     * after the launcher started its process.
     */
    static final Duration SIGHTING_GRACE = Duration.ofSeconds(60);

    private static final Logger log = LoggerFactory.getLogger(LocalConnector.class);

    private static final class Start {
        final Pool pool;
        volatile Instant endedAt;
        volatile boolean failed;

        Start(Pool pool) {
            this.pool = pool;
        }
    }

    private final Path home;
    private final ProcessRunner runner;
    private final DrainClient drains;
    private final Duration drainDeadline;
    private final Clock clock;
    private final int maxWorkers;
    private final Map<String, Start> starting = new HashMap<>();
    private final Map<String, Instant> drained = new HashMap<>();
    private final Map<String, Instant> failedStarts = new HashMap<>();
    private PoolCounts lastApplied = PoolCounts.NONE;

    public LocalConnector(Path home, ProcessRunner runner, DrainClient drains, Duration drainDeadline, Clock clock,
                          int maxWorkers) {
        this.home = home;
        this.runner = runner;
        this.drains = drains;
        this.drainDeadline = drainDeadline;
        this.clock = clock;
        this.maxWorkers = maxWorkers;
    }

    @Override
    public String name() {
        return "local";
    }

    @Override
    public synchronized ConnectorView observe(Fleet fleet) {
        forgetSettled(fleet);
        LocalLayout layout = LocalLayout.read(home);
        PoolCounts current = PoolCounts.NONE;
        Set<Pool> byHand = EnumSet.noneOf(Pool.class);
        for (Pool p : lastApplied.pools()) {
            int size = size(p, fleet, layout);
            current = current.with(p, size);
            if (!busy(p, fleet) && size != lastApplied.get(p)) {
                byHand.add(p);
            }
        }
        return new ConnectorView(current, byHand);
    }

    @Override
    public synchronized Optional<PoolCounts> apply(PoolCounts targets, Fleet fleet) {
        forgetSettled(fleet);
        LocalLayout layout = LocalLayout.read(home);
        PoolCounts applied = PoolCounts.NONE;
        for (Pool p : targets.pools()) {
            int size = size(p, fleet, layout);
            int want = targets.get(p);
            int done = want > size ? start(p, want - size, layout, fleet) : -drain(p, size - want, fleet);
            applied = applied.with(p, Math.max(0, size + done));
        }
        lastApplied = applied;
        return Optional.of(applied);
    }

    private int start(Pool pool, int count, LocalLayout layout, Fleet fleet) {
        int started = 0;
        Instant now = clock.instant();
        for (int n = 0; n < maxWorkers && started < count; n++) {
            String id = Ports.workerId(n);
            Instant failedAt = failedStarts.get(id);
            if (layout.poolOf(n) != pool || fleet.get(id).isPresent() || layout.runs(id) || starting.containsKey(id)
                    || drained.containsKey(id)
                    || (failedAt != null && Duration.between(failedAt, now).compareTo(RETRY_AFTER) < 0)) {
                continue;
            }
            Start s = new Start(pool);
            starting.put(id, s);
            started++;
            log.info("starting {} for the {} pool: bin/flotilla start-worker {}", id, pool.label(), n);
            runner.run(List.of(home.resolve("bin").resolve("flotilla").toString(), "start-worker", Integer.toString(n)), home)
                    .whenComplete((exit, error) -> finished(id, s, exit, error));
        }
        if (started < count) {
            log.warn("{} pool: started {} of {} workers; no free worker number of that role in this local cluster",
                    pool.label(), started, count);
        }
        return started;
    }

    private synchronized void finished(String id, Start s, Integer exit, Throwable error) {
        s.endedAt = clock.instant();
        if (error != null || exit == null || exit != 0) {
            s.failed = true;
            starting.remove(id);
            failedStarts.put(id, s.endedAt);
            log.warn("start-worker for {} failed ({}); not retrying it for {}", id,
                    error != null ? error.toString() : "exit " + exit, RETRY_AFTER);
        }
    }

    private int drain(Pool pool, int count, Fleet fleet) {
        List<FleetWorker> victims = new ArrayList<>(fleet.in(pool).stream()
                .filter(w -> w.ready() && !drained.containsKey(w.id())).toList());
        victims.sort(Comparator.comparingInt(FleetWorker::running).thenComparing(FleetWorker::id, Comparator.reverseOrder()));
        int n = Math.min(count, victims.size());
        for (FleetWorker w : victims.subList(0, n)) {
            drained.put(w.id(), clock.instant());
            log.info("draining {} ({} pool, {} running) at {}", w.id(), pool.label(), w.running(), w.endpoint());
            drains.drain(w.endpoint(), drainDeadline).whenComplete((left, error) -> {
                if (error != null) {
                    log.warn("drain of {} failed: {}", w.id(), error.toString());
                } else {
                    log.info("{} drained ({} requests left at the deadline)", w.id(), left);
                }
            });
        }
        return n;
    }

    /**
     * STARTING/READY workers of the pool not drained by us, plus starting workers not yet in membership:
     * ours, and recent processes of the launcher (each id once).
     */
    private int size(Pool pool, Fleet fleet, LocalLayout layout) {
        int live = (int) fleet.in(pool).stream().filter(w -> w.live() && !drained.containsKey(w.id())).count();
        Set<String> pending = new TreeSet<>();
        starting.forEach((id, s) -> {
            if (s.pool == pool && fleet.get(id).map(w -> !w.live()).orElse(true)) {
                pending.add(id);
            }
        });
        Instant now = clock.instant();
        layout.processes().forEach((id, startedAt) -> {
            if (layout.poolOf(id).filter(p -> p == pool).isPresent() && fleet.get(id).isEmpty() && !drained.containsKey(id)
                    && Duration.between(startedAt, now).compareTo(SIGHTING_GRACE) < 0) {
                pending.add(id);
            }
        });
        return live + pending.size();
    }

    /** True while a start of ours for the pool is unseen or a worker we drained still shows as live. */
    private boolean busy(Pool pool, Fleet fleet) {
        boolean starts = starting.values().stream().anyMatch(s -> s.pool == pool);
        boolean drains = drained.keySet().stream().anyMatch(id -> fleet.get(id).map(w -> w.pool() == pool && w.live()).orElse(false));
        return starts || drains;
    }

    /** Drops starts that showed up (or never will) and drained ids that came back as a new process. */
    private void forgetSettled(Fleet fleet) {
        Instant now = clock.instant();
        starting.entrySet().removeIf(e -> fleet.get(e.getKey()).map(FleetWorker::live).orElse(false)
                || (e.getValue().endedAt != null && Duration.between(e.getValue().endedAt, now).compareTo(SIGHTING_GRACE) > 0));
        drained.entrySet().removeIf(e -> fleet.get(e.getKey()).map(w -> w.since() > e.getValue().toEpochMilli()).orElse(false));
    }

    @Override
    public void close() {
        drains.close();
    }
}
