package io.flotilla.router.core;

import java.util.List;

/**
 * Flags workers too loaded to take more work and estimates when to retry. A candidate is busy when
 *
 * <pre>
 * queuedPrefillTokens &gt; busy.prefillTokens.limit(totalKvBlocks · blockSize)   or
 * decodeBlocks        &gt; busy.decodeBlocks.limit(totalKvBlocks)
 * </pre>
 *
 * Retry-after when every candidate is busy: the soonest a busy worker drains back under its prefill
 * limit, prefill_ms(Q − limit), where timing is known; otherwise {@code busy.retryAfterMs}; clamped to
 * [minRetryAfterMs, maxRetryAfterMs].
 */
public final class BusyDetector {

    private final RouterConfig.Busy busy;

    public BusyDetector(RouterConfig.Busy busy) {
        this.busy = busy;
    }

    public boolean isBusy(Candidate c) {
        return c.queuedPrefillTokens() > prefillLimit(c) || c.decodeBlocks() > decodeLimit(c);
    }

    public boolean enabled() {
        return busy.prefillTokens().kind() != RouterConfig.Threshold.Kind.DISABLED
                || busy.decodeBlocks().kind() != RouterConfig.Threshold.Kind.DISABLED;
    }

    /** Hint for a request refused because all of {@code busyCandidates} are busy. */
    public long retryAfterMs(List<Candidate> busyCandidates) {
        double best = Double.POSITIVE_INFINITY;
        for (Candidate c : busyCandidates) {
            boolean decodeBusy = c.decodeBlocks() > decodeLimit(c);
            if (decodeBusy || c.worker().timing().isEmpty()) {
                continue;
            }
            long excess = (long) Math.ceil(c.queuedPrefillTokens() - prefillLimit(c));
            best = Math.min(best, c.worker().timing().get().prefillMs(excess));
        }
        long hint = Double.isFinite(best) ? (long) Math.ceil(best) : busy.retryAfterMs();
        return Math.max(busy.minRetryAfterMs(), Math.min(busy.maxRetryAfterMs(), hint));
    }

    private double prefillLimit(Candidate c) {
        WorkerView w = c.worker();
        return busy.prefillTokens().limit((long) w.totalKvBlocks() * w.blockSize());
    }

    private double decodeLimit(Candidate c) {
        return busy.decodeBlocks().limit(c.worker().totalKvBlocks());
    }
}
