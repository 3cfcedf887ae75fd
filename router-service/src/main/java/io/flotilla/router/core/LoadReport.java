package io.flotilla.router.core;

/**
 * The last load report a worker published on {@code flotilla.worker-load}; it lags the worker by up
 * to one report interval.
 *
 * @param running              sequences in the running batch
 * @param waiting              sequences queued for admission
 * @param waitingPrefillTokens prompt tokens the worker still has to prefill
 * @param activeKvBlocks       KV blocks referenced by sequences
 */
public record LoadReport(int running, int waiting, long waitingPrefillTokens, int activeKvBlocks) {

    /** No report received yet: counts as idle. */
    public static final LoadReport NONE = new LoadReport(0, 0, 0, 0);

    public LoadReport {
        if (running < 0 || waiting < 0 || waitingPrefillTokens < 0 || activeKvBlocks < 0) {
            throw new IllegalArgumentException("load counts must not be negative");
        }
    }
}
