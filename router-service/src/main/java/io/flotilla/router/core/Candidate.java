package io.flotilla.router.core;

/**
 * A worker that passed the filters, with the request-specific numbers every scorer reads. Built once
 * per (request, worker) by {@link RoutingPolicy}; scorers never look at the snapshot themselves.
 *
 * @param overlapBlocks       matched leading blocks on this worker (0 without overlap data)
 * @param cachedTokens        H = min(overlapBlocks · blockSize, isl)
 * @param newTokens           P − H: prompt tokens this worker would have to prefill
 * @param queuedPrefillTokens prompt tokens already queued ahead on this worker: merge(report's waiting
 *                            prefill tokens, booked prefill tokens)
 * @param queuedPrefills      prompts those tokens belong to: merge(report's waiting requests, booked
 *                            prefills), at least 1 when any token is queued
 * @param decodeBlocks        KV blocks in use: merge(report's active KV blocks, booked decode blocks)
 * @param waiting             requests waiting for admission (from the load report)
 */
public record Candidate(WorkerView worker, int overlapBlocks, int cachedTokens, int newTokens,
                        long queuedPrefillTokens, int queuedPrefills, long decodeBlocks, int waiting) {

    /**
     * @param booked           the bookings on this worker now
     * @param bookedAtReport   the bookings on this worker when its last load report arrived
     */
    public static Candidate of(RoutingRequest request, WorkerView worker, int overlapBlocks, ActiveLoad booked,
                               ActiveLoad bookedAtReport, LoadMerge merge) {
        int cached = request.cachedTokens(overlapBlocks);
        LoadReport report = worker.load();
        long queued = merge.merge(report.waitingPrefillTokens(), booked.prefillTokens(), bookedAtReport.prefillTokens());
        int prompts = (int) merge.merge(report.waiting(), booked.prefillRequests(), bookedAtReport.prefillRequests());
        return new Candidate(worker, overlapBlocks, cached, request.islTokens() - cached, queued,
                queued > 0 ? Math.max(1, prompts) : 0,
                merge.merge(report.activeKvBlocks(), booked.decodeBlocks(), bookedAtReport.decodeBlocks()),
                report.waiting());
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
     * blocks of its prefix already resident (shared with whoever uses them, not allocated again).
     */
    public int newBlocks(RoutingRequest request) {
        return request.bookedBlocks() - cachedTokens / request.blockSize();
    }

    /** KV usage fraction with {@code extraBlocks} more in use, in [0, 1]; 0 when capacity is unknown. */
    public double kvUsage(long extraBlocks) {
        int total = worker.totalKvBlocks();
        return total == 0 ? 0 : Math.min(1.0, (double) (decodeBlocks + extraBlocks) / total);
    }
}
