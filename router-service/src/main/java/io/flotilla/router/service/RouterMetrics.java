package io.flotilla.router.service;

import io.flotilla.router.core.Decision;
import io.flotilla.router.core.ModeUsed;
import io.flotilla.router.core.Scan;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** The router's metrics; also keeps the counts {@code /actuator/router} shows. */
public final class RouterMetrics {

    private final Timer decision;
    private final Map<ModeUsed, Counter> decisions = new EnumMap<>(ModeUsed.class);
    private final Map<ModeUsed, AtomicLong> counts = new EnumMap<>(ModeUsed.class);
    private final Counter busy;
    private final Counter noWorker;
    private final DistributionSummary overlap;
    private final Counter indexerErrors;
    private final Counter failureReports;
    private final Counter disaggregated;
    private final Map<String, Counter> byPrefixTier = new java.util.LinkedHashMap<>();
    private final DistributionSummary onboardHost;
    private final DistributionSummary onboardDisk;
    private final Timer syncLag;
    private final Counter adapterLoaded;
    private final Counter adapterToLoad;
    private final Counter salted;
    private final DistributionSummary considered;
    private final DistributionSummary walked;
    private final Map<Scan.FullScan, Counter> fullScans = new EnumMap<>(Scan.FullScan.class);

    private final MeterRegistry registry;

    public RouterMetrics(MeterRegistry registry) {
        this.registry = registry;
        decision = Timer.builder("flotilla.router.decision").description("Time to decide one route, indexer call included")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000))
                .maximumExpectedValue(Duration.ofSeconds(1)).register(registry);
        for (ModeUsed m : ModeUsed.values()) {
            decisions.put(m, Counter.builder("flotilla.router.decisions").description("Routing decisions by the mode actually used")
                    .tag("mode", m.metricTag()).register(registry));
            counts.put(m, new AtomicLong());
        }
        busy = Counter.builder("flotilla.router.busy").description("Requests answered busy: every candidate over its thresholds")
                .register(registry);
        noWorker = Counter.builder("flotilla.router.no_worker").description("Requests with no eligible worker").register(registry);
        overlap = DistributionSummary.builder("flotilla.router.overlap_blocks")
                .description("Cached prefix blocks on the chosen worker").publishPercentileHistogram().register(registry);
        indexerErrors = Counter.builder("flotilla.router.indexer_errors")
                .description("FindMatches calls that failed, timed out or were skipped by the open breaker").register(registry);
        disaggregated = Counter.builder("flotilla.router.disaggregated")
                .description("Routed requests given a separate prefill worker (the rest run aggregated)").register(registry);
        for (String tier : new String[] {"device", "host", "disk", "none"}) {
            byPrefixTier.put(tier, Counter.builder("flotilla.router.decisions_by_prefix_tier")
                    .description("Routed decisions by the deepest KV tier the chosen worker was priced to reuse its prefix "
                            + "from (host, disk: onboarded; device: resident; none: recomputed)")
                    .tag("tier", tier).register(registry));
        }
        onboardHost = DistributionSummary.builder("flotilla.router.onboard_blocks")
                .description("Prefix blocks the chosen worker was priced to onboard from a lower KV tier").tag("tier", "host")
                .register(registry);
        onboardDisk = DistributionSummary.builder("flotilla.router.onboard_blocks")
                .description("Prefix blocks the chosen worker was priced to onboard from a lower KV tier").tag("tier", "disk")
                .register(registry);
        failureReports = Counter.builder("flotilla.router.worker_failures_reported")
                .description("Workers reported failing by gateways").register(registry);
        adapterLoaded = adapterRoutes(registry, "yes");
        adapterToLoad = adapterRoutes(registry, "no");
        salted = Counter.builder("flotilla.router.tenant_salted_routes")
                .description("Routed requests whose KV is private to their tenant (only tenant-isolating workers were candidates)")
                .register(registry);
        considered = DistributionSummary.builder("flotilla.router.candidates")
                .description("Workers one decision considered: the pruned candidate set, or every worker on a full scan")
                .publishPercentiles(0.5, 0.99).register(registry);
        walked = DistributionSummary.builder("flotilla.router.ranking_walked")
                .description("Ranked workers a pruned decision read to find its least-loaded eligible free ones")
                .publishPercentiles(0.5, 0.99).register(registry);
        for (Scan.FullScan why : Scan.FullScan.values()) {
            if (why != Scan.FullScan.NONE) {
                fullScans.put(why, Counter.builder("flotilla.router.full_scans")
                        .description("Decisions that considered every worker instead of the pruned candidate set, by reason")
                        .tag("reason", why.metricTag()).register(registry));
            }
        }
        syncLag = Timer.builder("flotilla.router.sync.apply.lag")
                .description("Booking changes of other replicas: from made there (its clock) to applied here")
                .publishPercentiles(0.5, 0.99).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(30))
                .register(registry);
    }

    private static Counter adapterRoutes(MeterRegistry registry, String loaded) {
        return Counter.builder("flotilla.router.adapter_routes")
                .description("Routed LoRA adapter requests, by whether the chosen worker had the adapter loaded")
                .tag("loaded", loaded).register(registry);
    }

    /** A routed request on a LoRA adapter ({@code loaded}: its worker had it loaded) or tenant-salted. */
    void scoped(boolean adapter, boolean loaded, boolean tenantSalted) {
        if (adapter) {
            (loaded ? adapterLoaded : adapterToLoad).increment();
        }
        if (tenantSalted) {
            salted.increment();
        }
    }

    /**
     * A routed request that named the worker of its conversation's previous turn: whether the index still had its
     * KV there ({@code kv}) and whether the decision kept it there ({@code outcome}).
     */
    void previousWorker(io.flotilla.router.core.PreviousWorkerHint.Judged hint) {
        Counter.builder("flotilla.router.previous_worker_hints")
                .description("Routed follow-up turns by where the index found their KV and where they went")
                .tag("kv", hint.kv()).tag("outcome", hint.outcome()).register(registry).increment();
    }

    /** Another replica's change was applied {@code lagMs} after it was made (negative: clock skew, counted as 0). */
    void syncApplied(long lagMs) {
        syncLag.record(Math.max(0, lagMs), TimeUnit.MILLISECONDS);
    }

    /** Changes of other replicas applied, with their lag p50, p99 and max in ms (recent, as the timer decays). */
    public Map<String, Object> syncLag() {
        var snap = syncLag.takeSnapshot();
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        out.put("applied", snap.count());
        for (var p : snap.percentileValues()) {
            out.put("lag_p" + Math.round(p.percentile() * 100) + "_ms", p.value(TimeUnit.MILLISECONDS));
        }
        out.put("lag_max_ms", snap.max(TimeUnit.MILLISECONDS));
        return out;
    }

    void decided(Decision d, long nanos) {
        decision.record(nanos, TimeUnit.NANOSECONDS);
        decisions.get(d.modeUsed()).increment();
        counts.get(d.modeUsed()).incrementAndGet();
        Scan scan = d.scan();
        if (scan != Scan.UNRECORDED) {
            considered.record(scan.considered());
            if (scan.pruned()) {
                walked.record(scan.walked());
            } else {
                fullScans.get(scan.fullScan()).increment();
            }
        }
        switch (d.outcome()) {
            case ROUTED -> {
                overlap.record(d.overlapBlocks());
                byPrefixTier.get(d.prefixTier()).increment();
                if (d.onboardHostBlocks() > 0) {
                    onboardHost.record(d.onboardHostBlocks());
                }
                if (d.onboardDiskBlocks() > 0) {
                    onboardDisk.record(d.onboardDiskBlocks());
                }
                if (d.disaggregated()) {
                    disaggregated.increment();
                }
            }
            case BUSY -> busy.increment();
            case NO_WORKER -> noWorker.increment();
        }
    }

    void indexerError() {
        indexerErrors.increment();
    }

    void workerFailureReported() {
        failureReports.increment();
    }

    /** Decisions per mode used since start. */
    public Map<String, Long> decisionCounts() {
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        counts.forEach((m, c) -> out.put(m.metricTag(), c.get()));
        out.put("disaggregated", (long) disaggregated.count());
        out.put("busy", (long) busy.count());
        out.put("no_worker", (long) noWorker.count());
        fullScans.forEach((why, c) -> out.put("full_scan_" + why.metricTag().replace('-', '_'), (long) c.count()));
        byPrefixTier.forEach((tier, c) -> out.put("prefix_tier_" + tier, (long) c.count()));
        return out;
    }
}
