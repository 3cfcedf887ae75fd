package io.flotilla.router.core;

/**
 * How a worker's last load report and this router's bookings for it combine into one estimate
 * (queued prefill tokens and prompts, decode blocks). Both describe largely the same requests: a booked
 * request shows up in the worker's report once it reaches the worker, and stays booked until
 * prefill-done / release. Reports lag by up to one report interval; bookings are current but only
 * cover requests routed by this router and the replicas it syncs with.
 */
public enum LoadMerge {
    /**
     * report + (booked now − booked when the report arrived), at least 0: the report is the truth at
     * its time, the bookings since then are the change. Exact when prefill-done and release arrive on
     * time; needs the shell to call {@link BookingLedger#loadReported} when a report arrives (without
     * that it degrades to SUM). Default.
     */
    DELTA,
    /**
     * max(report, booked): never counts a request twice, but a router is blind to its own new
     * bookings on a worker until they exceed that worker's (stale) report.
     */
    MAX,
    /**
     * report + booked, the formula in the design notes: counts a request twice once the report sees
     * it, so it overstates busy workers (errs toward spreading) and trips busy thresholds early.
     */
    SUM;

    public long merge(long reported, long booked, long bookedAtReport) {
        return switch (this) {
            case DELTA -> Math.max(0, reported + booked - bookedAtReport);
            case MAX -> Math.max(reported, booked);
            case SUM -> reported + booked;
        };
    }
}
