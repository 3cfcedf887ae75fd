package io.flotilla.router.core;

/**
 * A worker that passed the filters, with the request-specific numbers every scorer reads. Built once
 * per (request, worker) by {@link RoutingPolicy}; scorers never look at the snapshot themselves.
 *
 * @param overlapBlocks       matched leading blocks on this worker's device (0 without overlap data)
 * @param cachedTokens        H: prompt tokens this worker does not compute, min(blocks · bs, isl), where
 *                            blocks are the device prefix, or the any-tier prefix when onboarding its
 *                            lower-tier blocks is cheaper than recomputing them ({@link #of})
 * @param newTokens           P − H: prompt tokens this worker would have to prefill
 * @param queuedPrefillTokens prompt tokens already queued ahead on this worker: merge(report's waiting
 *                            prefill tokens, booked prefill tokens)
 * @param queuedPrefills      prompts those tokens belong to: merge(report's waiting requests, booked
 *                            prefills), at least 1 when any token is queued
 * @param decodeBlocks        KV blocks in use: merge(report's active KV blocks, booked decode blocks)
 * @param waiting             requests waiting for admission (from the load report)
 * @param residentTokens      the part of H already on the device (onboarded blocks take new device blocks)
 * @param onboardHost         lower-tier blocks priced as onboarded from host memory (0: recomputed)
 * @param onboardDisk         ... from disk
 * @param onboardMs           their transfer time over the worker's links, speedup applied (0 without timing)
 */
public record Candidate(WorkerView worker, int overlapBlocks, int cachedTokens, int newTokens,
                        long queuedPrefillTokens, int queuedPrefills, long decodeBlocks, int waiting,
                        int residentTokens, int onboardHost, int onboardDisk, double onboardMs) {

    /** In block units a lower-tier block costs this fraction of a recomputed one (host, disk). */
    static final double HOST_BLOCK_FRACTION = 0.25;
    static final double DISK_BLOCK_FRACTION = 0.5;

    /** A candidate without lower-tier blocks. */
    public Candidate(WorkerView worker, int overlapBlocks, int cachedTokens, int newTokens, long queuedPrefillTokens,
                     int queuedPrefills, long decodeBlocks, int waiting) {
        this(worker, overlapBlocks, cachedTokens, newTokens, queuedPrefillTokens, queuedPrefills, decodeBlocks, waiting,
                cachedTokens, 0, 0, 0);
    }

    /** As {@link #of(RoutingRequest, WorkerView, KvOverlap, ActiveLoad, ActiveLoad, LoadMerge)} for device blocks only. */
    public static Candidate of(RoutingRequest request, WorkerView worker, int overlapBlocks, ActiveLoad booked,
                               ActiveLoad bookedAtReport, LoadMerge merge) {
        return of(request, worker, KvOverlap.deviceOnly(overlapBlocks), booked, bookedAtReport, merge);
    }

    /**
     * The candidate for {@code worker}, whose KV holds {@code overlap} of the request's prefix. Lower-tier
     * blocks count as cached when the worker advertises their links and onboarding them is cheaper than
     * recomputing them, as the engine itself decides:
     * <pre>
     * device prefix:  prefill_ms(P − H_dev)
     * any-tier prefix: prefill_ms(P − H_any) + onboard_ms(host, disk)      (block units: host · 1/4 + disk · 1/2)
     * </pre>
     *
     * @param booked           the bookings on this worker now
     * @param bookedAtReport   the bookings on this worker when its last load report arrived
     */
    public static Candidate of(RoutingRequest request, WorkerView worker, KvOverlap overlap, ActiveLoad booked,
                               ActiveLoad bookedAtReport, LoadMerge merge) {
        int resident = request.cachedTokens(overlap.deviceRun());
        int cached = resident;
        int host = 0;
        int disk = 0;
        double onboardMs = 0;
        KvTierLinks links = worker.tiers();
        if (overlap.hasLowerTiers() && links.prices(overlap)) {
            int any = request.cachedTokens(overlap.anyTier());
            double recompute;
            double onboard;
            if (worker.timing().isPresent()) {
                WorkerTiming t = worker.timing().get();
                onboardMs = links.onboardMs(overlap.host(), overlap.disk()) / t.speedup();
                recompute = t.prefillMs(request.islTokens() - resident);
                onboard = t.prefillMs(request.islTokens() - any) + onboardMs;
            } else {
                recompute = (double) (request.islTokens() - resident) / request.blockSize();
                onboard = (double) (request.islTokens() - any) / request.blockSize()
                        + HOST_BLOCK_FRACTION * overlap.host() + DISK_BLOCK_FRACTION * overlap.disk();
            }
            if (onboard < recompute) {
                cached = any;
                host = overlap.host();
                disk = overlap.disk();
                // device blocks inside the any-tier prefix are resident too; only the onboarded ones are new
                resident = Math.min(any, resident + (overlap.device() - overlap.deviceRun()) * request.blockSize());
            } else {
                onboardMs = 0;
            }
        }
        LoadReport report = worker.load();
        long queued = merge.merge(report.waitingPrefillTokens(), booked.prefillTokens(), bookedAtReport.prefillTokens());
        int prompts = (int) merge.merge(report.waiting(), booked.prefillRequests(), bookedAtReport.prefillRequests());
        return new Candidate(worker, overlap.deviceRun(), cached, request.islTokens() - cached, queued,
                queued > 0 ? Math.max(1, prompts) : 0,
                merge.merge(report.activeKvBlocks(), booked.decodeBlocks(), bookedAtReport.decodeBlocks()),
                report.waiting(), resident, host, disk, onboardMs);
    }

    public String id() {
        return worker.id();
    }

    /** Tie-break key: fewer queued prefill tokens + decode blocks is less loaded. */
    public long loadRank() {
        return queuedPrefillTokens + decodeBlocks;
    }

    /**
     * KV blocks this request adds on this worker if it decodes here: ⌈(isl + osl)/bs⌉ minus the full
     * blocks of its prefix already resident on the device (shared with whoever uses them, not allocated
     * again; onboarded blocks take new ones).
     */
    public int newBlocks(RoutingRequest request) {
        return request.bookedBlocks() - residentTokens / request.blockSize();
    }

    /** The onboarding term in block units (for pools priced in blocks). */
    double onboardBlocks() {
        return HOST_BLOCK_FRACTION * onboardHost + DISK_BLOCK_FRACTION * onboardDisk;
    }

    /** KV usage fraction with {@code extraBlocks} more in use, in [0, 1]; 0 when capacity is unknown. */
    public double kvUsage(long extraBlocks) {
        int total = worker.totalKvBlocks();
        return total == 0 ? 0 : Math.min(1.0, (double) (decodeBlocks + extraBlocks) / total);
    }
}
