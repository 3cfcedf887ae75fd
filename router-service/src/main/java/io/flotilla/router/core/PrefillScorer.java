package io.flotilla.router.core;

import java.util.EnumSet;
import java.util.Set;

/**
 * Time until this request's prefill finishes on a worker: the prefill queued ahead drains first,
 * then the request's own uncached tokens.
 *
 * <pre>
 * N = P − H   (with cache credit; H = min(overlap · blockSize, P))      N = P   (without)
 * Q = queued prefill tokens   = merge(report.waitingPrefillTokens, booked prefill tokens)
 * n = queued prompts          = max(1, merge(report.waiting, booked prefills)) when Q &gt; 0
 * ms:     queue_ms(Q, n) + O + prefill_ms(N)
 *         queue_ms(Q, n) = (a·Q²/n + b·Q + c·n) / speedup   = Σ prefill_ms(Q/n) over n equal prompts
 * blocks: (Q + N) / blockSize + host / 4 + disk / 2
 * </pre>
 *
 * The request is prefilled in its own pass after the queue, so this is prefill_time(queued) +
 * prefill_time(new), not prefill_time(queued + new): the request's own a·N² term must not grow with
 * the queue. The queue is priced as n passes because each queued prompt pays the fixed cost c; pricing
 * it as one chunk (n = 1) undercounts a queue of short prompts (with cached prefixes) badly, and the
 * router then piles work onto its cache owner.
 */
public final class PrefillScorer implements Scorer {

    private final boolean cacheCredit;

    private PrefillScorer(boolean cacheCredit) {
        this.cacheCredit = cacheCredit;
    }

    /** Credits the worker's cached prefix ({@code kv} mode). */
    public static PrefillScorer withCacheCredit() {
        return new PrefillScorer(true);
    }

    @Override
    public Set<Signal> requires() {
        return cacheCredit ? EnumSet.of(Signal.KV_OVERLAP, Signal.LOAD, Signal.TIMING)
                : EnumSet.of(Signal.LOAD, Signal.TIMING);
    }

    @Override
    public double cost(ScoringContext ctx, Candidate c) {
        long queued = c.queuedPrefillTokens();
        long fresh = cacheCredit ? c.newTokens() : ctx.request().islTokens();
        if (ctx.unit() == CostUnit.MILLISECONDS) {
            WorkerTiming t = c.worker().timing().orElseThrow();
            return t.queuedPrefillMs(queued, c.queuedPrefills()) + (cacheCredit ? c.onboardMs() : 0) + t.prefillMs(fresh);
        }
        return (double) (queued + fresh) / ctx.request().blockSize() + (cacheCredit ? c.onboardBlocks() : 0);
    }

    @Override
    public String name() {
        return cacheCredit ? "prefill" : "prefill-no-cache";
    }

    @Override
    public Set<Phase> phases() {
        return EnumSet.of(Phase.PREFILL);
    }

    @Override
    public Scorer withoutCacheCredit() {
        return cacheCredit ? new PrefillScorer(false) : this;
    }
}
