package io.flotilla.router.core;

import java.util.Map;

/**
 * What became of a request's {@code previous_worker} hint (the worker that served the previous turn of its
 * conversation, as the gateway names it in {@code RouteRequest.hints}). The hint is not obeyed: the policy prices
 * every candidate, the hinted one included, by the overlap the index reports for it, so a turn stays where its KV
 * still is unless load makes another worker cheaper, and moves when the KV is gone. This only judges the decision
 * afterwards, for the metrics. Pure.
 */
public final class PreviousWorkerHint {

    /** The hint key the gateway sets. */
    public static final String KEY = "previous_worker";

    /**
     * @param kv      {@code resident} (the index has blocks of the prompt on the hinted worker), {@code gone} (it
     *                has none there), {@code unknown} (no index answer: a mode without KV, or the indexer down)
     * @param outcome {@code kept} (the hinted worker was chosen) or {@code moved}
     */
    public record Judged(String kv, String outcome) {
    }

    private PreviousWorkerHint() {
    }

    /** Null when there is no hint or the request was not routed. */
    public static Judged judge(String hinted, Map<String, KvOverlap> matches, Decision decision) {
        if (hinted == null || hinted.isEmpty() || decision.outcome() != Decision.Outcome.ROUTED) {
            return null;
        }
        String kv;
        if (matches == null) {
            kv = "unknown";
        } else {
            KvOverlap o = matches.get(hinted);
            kv = o != null && o.anyTier() > 0 ? "resident" : "gone";
        }
        return new Judged(kv, hinted.equals(decision.workerId()) ? "kept" : "moved");
    }
}
