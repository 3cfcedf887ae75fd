package io.flotilla.router.core;

import io.flotilla.router.booking.LoadRanking;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.statistics.Statistics;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pruned decision against the full scan, over random fleets: loads, bookings, report baselines, overlaps,
 * timing profiles (one, two, or some workers without timing), eligibility (model, block size, state,
 * suspect, LoRA adapters, tenant isolation, exclusions), busy thresholds, weights and load merges. Named
 * invariants ({@link CandidateSet}'s guarantee):
 * <ul>
 *   <li>"a pruned decision prices every candidate as the full scan does" (same unit, same costs);</li>
 *   <li>"when the full scan's choice is a candidate, the pruned decision is the full scan's";</li>
 *   <li>"otherwise it costs at most Δ more", Δ = max δ − min δ over the eligible free workers holding none
 *       of the prompt, δ written out here from the cost formula, not taken from the cost model;</li>
 *   <li>"a decision that does not prune is the full scan's".</li>
 * </ul>
 * Each try builds its fleet from one seeded {@link Random}; {@link #aRankingInTheWrongOrderBreaksTheMargin}
 * shows the margin check fails when the ranking lies.
 */
class PrunedDecisionPropertyTest {

    private static final String MODEL = Fixtures.MODEL;
    private static final int BS = Fixtures.BS;
    private static final WorkerTiming FAST = new WorkerTiming(2e-7, 8e-3, 9, -10, 30, 3, 1);
    /** Decode slows down past 30 % usage and speeds up after (d1 + 2·d2 &lt; 0): holders are always priced. */
    private static final WorkerTiming HUMPED = new WorkerTiming(3e-7, 1e-2, 12, -60, 40, 4, 1);

    record Scenario(RoutingRequest request, ClusterSnapshot snapshot, RouterConfig config) {
    }

    static Scenario scenario(long seed) {
        Random rnd = new Random(seed);
        int n = 4 + rnd.nextInt(60);
        int profiles = rnd.nextInt(3); // 0: one profile; 1: three; 2: one, and some workers without timing
        boolean withDecode = rnd.nextInt(12) == 0;
        List<WorkerView> workers = new ArrayList<>();
        Map<String, Integer> overlaps = new HashMap<>();
        Map<String, ActiveLoad> booked = new HashMap<>();
        Map<String, ActiveLoad> atReport = new HashMap<>();
        int capacity = 2000 + rnd.nextInt(20_000);
        int scale = rnd.nextBoolean() ? 1 : 50; // a light fleet: close loads, where what a request adds decides
        for (int i = 0; i < n; i++) {
            String id = String.format("w%03d", i);
            boolean untimed = profiles == 2 && rnd.nextInt(4) == 0;
            WorkerTiming timing = profiles != 1 ? Fixtures.MOCKER : rnd.nextInt(5) == 0 ? HUMPED
                    : rnd.nextBoolean() ? FAST : Fixtures.MOCKER;
            WorkerView.Role role = withDecode && i == 0 ? WorkerView.Role.DECODE
                    : rnd.nextInt(8) == 0 ? WorkerView.Role.UNSPECIFIED : WorkerView.Role.AGGREGATED;
            WorkerAdapters adapters = rnd.nextInt(3) == 0 ? WorkerAdapters.NONE
                    : new WorkerAdapters(rnd.nextBoolean() ? Set.of("a1") : Set.of(), Set.of("a1"), rnd.nextInt(400));
            workers.add(new WorkerView(id, role, rnd.nextInt(10) == 0 ? "other" : MODEL, rnd.nextInt(10) == 0 ? 32 : BS,
                    "", id + ":1", rnd.nextInt(10) == 0 ? WorkerView.State.DRAINING : WorkerView.State.READY,
                    rnd.nextInt(10) != 0, untimed ? Optional.empty() : Optional.of(timing),
                    untimed && rnd.nextBoolean() ? 0 : capacity,
                    new LoadReport(rnd.nextInt(50), rnd.nextInt(20 / scale + 1), rnd.nextInt(60_000 / scale),
                            rnd.nextInt(capacity / scale)),
                    KvTierLinks.NONE, adapters, rnd.nextInt(4) == 0 ? WorkerView.Isolation.NONE
                    : WorkerView.Isolation.SALT_AFTER_PUBLIC_PREFIX));
            if (rnd.nextInt(4) == 0) {
                overlaps.put(id, rnd.nextInt(200));
            }
            if (rnd.nextBoolean()) {
                booked.put(id, new ActiveLoad(rnd.nextInt(30_000 / scale), rnd.nextInt(10), rnd.nextInt(5_000 / scale),
                        rnd.nextInt(40)));
                if (rnd.nextBoolean()) {
                    atReport.put(id, new ActiveLoad(rnd.nextInt(30_000 / scale), rnd.nextInt(10),
                            rnd.nextInt(5_000 / scale), 1));
                }
            }
        }
        Set<String> exclude = new HashSet<>();
        if (rnd.nextInt(4) == 0) {
            exclude.add(String.format("w%03d", rnd.nextInt(n)));
        }
        int blocks = rnd.nextInt(300);
        RoutingRequest r = new RoutingRequest("r", MODEL, blocks * BS + rnd.nextInt(BS), BS,
                Fixtures.chain(seed, blocks), exclude, rnd.nextBoolean(), rnd.nextInt(2000),
                rnd.nextInt(3) == 0 ? "a1" : "", rnd.nextInt(4) == 0);
        RouterConfig.Busy busy = rnd.nextBoolean() ? RouterDefaults.config().busy()
                : new RouterConfig.Busy(RouterConfig.Threshold.absolute(rnd.nextInt(70_000)),
                RouterConfig.Threshold.fraction(0.3 + rnd.nextDouble()), 1000, 100, 30_000);
        RouterConfig config = RouterDefaults.config()
                .withStrategy(rnd.nextBoolean() ? Strategy.KV : Strategy.LOAD)
                .withLoadMerge(LoadMerge.values()[rnd.nextInt(LoadMerge.values().length)])
                .withWeights(new RouterConfig.Weights(rnd.nextDouble() * 2, rnd.nextDouble() * 2, rnd.nextDouble() * 2))
                .withBusy(busy)
                .withPruning(new RouterConfig.Pruning(true, 1 + rnd.nextInt(4)));
        LoadRanking ranking = new LoadRanking(config);
        for (WorkerView w : workers) {
            ranking.put(w, booked.getOrDefault(w.id(), ActiveLoad.NONE), atReport.getOrDefault(w.id(), ActiveLoad.NONE));
        }
        OverlapSource source = OverlapSource.values()[rnd.nextInt(OverlapSource.values().length)];
        return new Scenario(r, new ClusterSnapshot(workers, overlaps, source, booked, atReport, Map.of(), ranking), config);
    }

    @Property(seed = "20261203", tries = 600)
    void aPrunedDecisionIsTheFullScansOrCostsAtMostTheMarginMore(@ForAll long seed) {
        Scenario s = scenario(seed);
        Decision pruned = new RoutingPolicy(s.config(), new Random(seed)).decide(s.request(), s.snapshot());
        Decision full = new RoutingPolicy(s.config().withPruning(RouterConfig.Pruning.OFF), new Random(seed))
                .decide(s.request(), s.snapshot());
        Statistics.label("scan").collect(pruned.scan().pruned()
                ? (full.workerId().isEmpty() || pruned.scores().containsKey(full.workerId()) ? "pruned, choice in set"
                : "pruned, choice outside set") : pruned.scan().fullScan().metricTag());
        assertThat(violation(s, pruned, full)).isEmpty();
    }

    /** What breaks the guarantee in {@code pruned} against {@code full}, or empty. */
    static Optional<String> violation(Scenario s, Decision pruned, Decision full) {
        if (!pruned.scan().pruned()) {
            return pruned.withScan(Scan.UNRECORDED).equals(full.withScan(Scan.UNRECORDED)) ? Optional.empty()
                    : Optional.of("a full-scan fallback differs from the full scan");
        }
        if (!full.routed() || pruned.unit() != full.unit()) {
            return Optional.of("pruned routed in " + pruned.unit() + ", full scan " + full.outcome() + " in " + full.unit());
        }
        for (Map.Entry<String, Double> e : pruned.scores().entrySet()) {
            Double f = full.scores().get(e.getKey());
            if (f == null || Double.compare(f, e.getValue()) != 0) {
                return Optional.of("candidate " + e.getKey() + " priced " + e.getValue() + ", full scan " + f);
            }
        }
        if (pruned.scores().containsKey(full.workerId())) {
            return choice(pruned).equals(choice(full)) ? Optional.empty() : Optional.of("full scan's choice " + full.workerId() + " was a candidate, pruned chose "
                    + pruned.workerId());
        }
        if (s.snapshot().overlapOf(full.workerId()) > 0 && credit(s)) {
            return Optional.of("full scan's choice " + full.workerId() + " holds blocks but was not a candidate");
        }
        double excess = full.scores().get(pruned.workerId()) - full.scores().get(full.workerId());
        double margin = margin(s, full.unit());
        double tolerance = 1e-9 * Math.max(1, Math.abs(full.scores().get(full.workerId())));
        return excess <= margin + tolerance ? Optional.empty()
                : Optional.of("pruned costs " + excess + " more than the full scan, margin " + margin);
    }

    /** A decision without its scores and scan: what the shell books and answers. */
    private static Decision choice(Decision d) {
        return new Decision(d.outcome(), d.workerId(), d.workerEndpoint(), d.prefillWorkerId(), d.prefillEndpoint(),
                d.overlapBlocks(), d.prefillOverlapBlocks(), d.newPrefillTokens(), d.newDecodeBlocks(), Map.of(),
                d.modeUsed(), d.unit(), d.retryAfterMs(), d.onboardHostBlocks(), d.onboardDiskBlocks());
    }

    private static boolean credit(Scenario s) {
        return s.config().strategy() == Strategy.KV && s.snapshot().source() != OverlapSource.NONE;
    }

    /** Δ = max δ − min δ over the eligible, free workers of the request's pool that hold none of the prompt. */
    static double margin(Scenario s, CostUnit unit) {
        RoutingRequest r = s.request();
        RouterConfig.Weights w = s.config().weights();
        BusyDetector busy = new BusyDetector(s.config().busy());
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        int n = r.bookedBlocks();
        long promptBlocks = ((long) r.islTokens() + BS - 1) / BS;
        for (WorkerView v : s.snapshot().workers()) {
            if (!FilterChain.STANDARD.admits(r, v) || v.isPrefill() || (credit(s) && s.snapshot().overlapOf(v.id()) > 0)) {
                continue;
            }
            Candidate c = Candidate.of(r, v, 0, s.snapshot().activeLoadOf(v.id()), s.snapshot().bookedAtReportOf(v.id()),
                    s.config().loadMerge());
            if (busy.enabled() && busy.isBusy(c)) {
                continue;
            }
            boolean loaded = v.adapters().hasLoaded(r.loraName());
            double delta;
            if (unit == CostUnit.BLOCKS) {
                delta = w.prefill() * ((double) r.islTokens() / BS + (loaded ? 0 : Math.max(1, promptBlocks)));
            } else {
                WorkerTiming t = v.timing().orElseThrow();
                double cap = v.totalKvBlocks();
                delta = w.prefill() * (t.prefillMs(r.islTokens()) + (loaded ? 0 : v.adapters().loadMs()))
                        + w.decode() * (t.decodeMs(Math.min(1, (c.decodeBlocks() + n) / cap))
                        - t.decodeMs(Math.min(1, c.decodeBlocks() / cap)));
            }
            lo = Math.min(lo, delta);
            hi = Math.max(hi, delta);
        }
        return hi - lo;
    }

    /** The margin check is not vacuous: a ranking that lists the most loaded first breaks it. */
    @Test
    void aRankingInTheWrongOrderBreaksTheMargin() {
        int broken = 0;
        for (long seed = 1; seed <= 150; seed++) {
            Scenario s = scenario(seed);
            ClusterSnapshot lying = s.snapshot().withRanking(new MostLoadedFirst(s.snapshot().ranking()));
            Decision pruned = new RoutingPolicy(s.config(), new Random(seed)).decide(s.request(), lying);
            Decision full = new RoutingPolicy(s.config().withPruning(RouterConfig.Pruning.OFF), new Random(seed))
                    .decide(s.request(), s.snapshot());
            if (violation(s, pruned, full).isPresent()) {
                broken++;
            }
        }
        assertThat(broken).as("scenarios where a reversed ranking breaks the guarantee").isGreaterThan(10);
    }

    /** A ranking that walks its workers from the most loaded down. */
    private record MostLoadedFirst(WorkerRanking real) implements WorkerRanking {
        @Override
        public Ranked get(String workerId) {
            return real.get(workerId);
        }

        @Override
        public Iterator<Ranked> ascending(String model, int blockSize, CostUnit unit) {
            List<Ranked> all = new ArrayList<>();
            real.ascending(model, blockSize, unit).forEachRemaining(all::add);
            java.util.Collections.reverse(all);
            return all.iterator();
        }

        @Override
        public Collection<Ranked> unpriced(String model, int blockSize) {
            return real.unpriced(model, blockSize);
        }

        @Override
        public boolean disaggregated(String model, int blockSize) {
            return real.disaggregated(model, blockSize);
        }
    }
}
