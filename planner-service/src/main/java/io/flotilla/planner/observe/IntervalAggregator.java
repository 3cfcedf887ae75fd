package io.flotilla.planner.observe;

import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.GatewayModelLoad;
import io.flotilla.protocol.v1.RequestOutcome;
import io.flotilla.protocol.v1.RequestRecord;
import io.flotilla.protocol.v1.WorkerLoad;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * Folds one model's request records and load reports into one {@link Observation} per interval.
 * An interval is what arrived between two {@link #close} calls (arrival order, not record
 * timestamps: a late record counts in the interval it arrives in).
 *
 * <ul>
 *   <li>request rate = arrivals / interval, arrivals = finished requests (every outcome but client
 *       errors: rejected, failed and timed out requests were demand too) + the growth of the requests in
 *       flight (running + waiting, each worker's latest load report, summed over the workers in the
 *       fleet, plus the requests waiting in the gateways' flow-control queues, each gateway's latest
 *       {@code GatewayLoad}). Requests are conserved — each one that arrived is either in flight or has finished — so
 *       this counts demand when it arrives; counting finished requests alone lags it by the requests'
 *       latency and, on a saturated pool, reads the pool's throughput instead of the load; leaving out
 *       the gateways' queues does the same once the pool's overflow waits there. A gateway not heard from
 *       for five report intervals (at least {@link #GATEWAY_SILENT}) is forgotten, as a worker that
 *       left the fleet. A negative
 *       count (a worker left the fleet with requests in flight, whose records come later) is 0 and is
 *       carried into the next interval only. The first interval has no starting count and counts
 *       finished requests only;</li>
 *   <li>lengths and latencies come from OK requests only;</li>
 *   <li>ITL statistics are over per-request mean ITLs ({@code RequestRecord.itl_ms}); TTFT and ITL of 0
 *       (not measured) are skipped;</li>
 *   <li>load: each worker's reports in the interval are averaged, then prefill queue tokens are summed
 *       over the prefill-serving pool — plus the gateways' queued requests at the mean ISL (the interval's,
 *       else the last one seen): they wait for prefill as much as a worker's waiting requests do, and
 *       once the pool is saturated that is where they wait — KV usage and running requests averaged over workers of the
 *       serving pool (prefill-serving = PREFILL if any such worker reported, else AGGREGATED; decode-serving
 *       = DECODE, else AGGREGATED).</li>
 * </ul>
 * Not thread-safe; the caller serialises access.
 */
public final class IntervalAggregator {

    static final int SAMPLE_CAPACITY = 20_000;
    /** The shortest silence after which a gateway's queue no longer counts. */
    static final Duration GATEWAY_SILENT = Duration.ofSeconds(5);

    /** One gateway's queue for this model, as of its latest report. */
    private record GatewayQueue(int queued, Instant receivedAt, Duration silentAfter) {
    }

    private static final class LoadSum {
        long n;
        double queuedTokens;
        double kvUsage;
        double running;
    }

    private final String model;
    private SampleSet isl = new SampleSet(SAMPLE_CAPACITY);
    private SampleSet osl = new SampleSet(SAMPLE_CAPACITY);
    private SampleSet cached = new SampleSet(SAMPLE_CAPACITY);
    private SampleSet ttft = new SampleSet(SAMPLE_CAPACITY);
    private SampleSet itl = new SampleSet(SAMPLE_CAPACITY);
    private long requests;
    private Map<String, LoadSum> loads = new HashMap<>();
    /** Latest running + waiting requests per worker (kept across intervals). */
    private final Map<String, Integer> inFlight = new HashMap<>();
    /** Latest queued requests per gateway (kept across intervals). */
    private final Map<String, GatewayQueue> gatewayQueued = new HashMap<>();
    /** Requests in flight when the interval began; NaN before the first close. */
    private double inFlightAtStart = Double.NaN;
    /** The latest interval's mean ISL, for the gateways' queued requests of an interval without records. */
    private double lastIslMean = Double.NaN;
    /** The previous interval's arrivals below zero, carried into this one. */
    private double deficit;
    private Instant start;

    public IntervalAggregator(String model, Instant start) {
        this.model = model;
        this.start = start;
    }

    public void onRequest(RequestRecord r) {
        if (!model.equals(r.getModel()) || r.getOutcome() == RequestOutcome.REQUEST_OUTCOME_CLIENT_ERROR) {
            return;
        }
        requests++;
        if (r.getOutcome() != RequestOutcome.REQUEST_OUTCOME_OK) {
            return;
        }
        isl.add(r.getIsl());
        osl.add(r.getOsl());
        cached.add(r.getCachedTokens());
        if (r.getTtftMs() > 0) {
            ttft.add(r.getTtftMs());
        }
        if (r.getItlMs() > 0) {
            itl.add(r.getItlMs());
        }
    }

    /** A load report of a worker of this model (the caller checks membership). */
    public void onLoad(WorkerLoad load) {
        LoadSum s = loads.computeIfAbsent(load.getWorkerId(), k -> new LoadSum());
        s.n++;
        s.queuedTokens += load.getWaitingPrefillTokens();
        s.kvUsage += load.getTotalKvBlocks() == 0 ? 0 : (double) load.getActiveKvBlocks() / load.getTotalKvBlocks();
        s.running += load.getRunning();
        inFlight.put(load.getWorkerId(), load.getRunning() + load.getWaiting());
    }

    /** A gateway's report, received at {@code receivedAt} (the planner's clock: gateways' clocks may differ). */
    public void onGatewayLoad(GatewayLoad load, Instant receivedAt) {
        int queued = 0;
        for (GatewayModelLoad m : load.getModelsList()) {
            if (model.equals(m.getModel())) {
                queued += m.getQueued();
            }
        }
        Duration silentAfter = Duration.ofMillis(5L * load.getIntervalMs());
        gatewayQueued.put(load.getGatewayId(), new GatewayQueue(queued, receivedAt,
                silentAfter.compareTo(GATEWAY_SILENT) < 0 ? GATEWAY_SILENT : silentAfter));
    }

    /** Requests waiting in the gateways' queues now (the gateways heard from lately). */
    public int gatewayQueued() {
        return gatewayQueued.values().stream().mapToInt(GatewayQueue::queued).sum();
    }

    /** Ends the interval at {@code now}, starts the next one, and returns what it showed. */
    public Observation close(Instant now, Fleet fleet, java.util.function.Function<String, java.util.Optional<Pool>> poolOf) {
        double seconds = Math.max(1e-3, Duration.between(start, now).toMillis() / 1000.0);
        Map<Pool, double[]> perPool = new HashMap<>(); // pool → {workers, queued, kv, running}
        loads.forEach((worker, s) -> poolOf.apply(worker).ifPresent(p -> {
            double[] a = perPool.computeIfAbsent(p, k -> new double[4]);
            a[0]++;
            a[1] += s.queuedTokens / s.n;
            a[2] += s.kvUsage / s.n;
            a[3] += s.running / s.n;
        }));
        double[] prefillSide = perPool.getOrDefault(Pool.PREFILL, perPool.getOrDefault(Pool.AGGREGATED, new double[4]));
        double[] decodeSide = perPool.getOrDefault(Pool.DECODE, perPool.getOrDefault(Pool.AGGREGATED, new double[4]));
        PoolCounts ready = fleet.ready();
        inFlight.keySet().removeIf(worker -> fleet.get(worker).isEmpty());
        gatewayQueued.values().removeIf(g -> g.receivedAt().plus(g.silentAfter()).isBefore(now));
        int queuedAtGateways = gatewayQueued();
        double inFlightNow = inFlight.values().stream().mapToInt(Integer::intValue).sum() + queuedAtGateways;
        double counted = requests + (Double.isNaN(inFlightAtStart) ? 0 : inFlightNow - inFlightAtStart) + deficit;
        double arrivals = Math.max(0, counted);
        if (Double.isFinite(isl.mean())) {
            lastIslMean = isl.mean();
        }
        double gatewayQueueTokens = Double.isFinite(lastIslMean) ? queuedAtGateways * lastIslMean : 0;
        deficit = Math.min(0, counted - deficit);
        inFlightAtStart = inFlightNow;
        Observation o = new Observation(now, seconds, requests, arrivals / seconds,
                isl.mean(), isl.percentile(0.9), osl.mean(), osl.percentile(0.9), cached.mean(),
                ttft.percentile(0.5), ttft.percentile(0.9), itl.percentile(0.5), itl.percentile(0.9), ttft.count(),
                prefillSide[1] + gatewayQueueTokens, avg(decodeSide[2], decodeSide[0]),
                avg(prefillSide[3], prefillSide[0]), avg(decodeSide[3], decodeSide[0]), ready);
        start = now;
        requests = 0;
        isl = new SampleSet(SAMPLE_CAPACITY);
        osl = new SampleSet(SAMPLE_CAPACITY);
        cached = new SampleSet(SAMPLE_CAPACITY);
        ttft = new SampleSet(SAMPLE_CAPACITY);
        itl = new SampleSet(SAMPLE_CAPACITY);
        loads = new HashMap<>();
        return o;
    }

    private static double avg(double sum, double n) {
        return n == 0 ? 0 : sum / n;
    }
}
