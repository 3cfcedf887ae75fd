package io.flotilla.bench.stats;

/**
 * Latency objectives: a request meets them when it completed ok, its TTFT is at most
 * {@code ttftMs} (when set) and its mean per-token ITL is at most {@code itlMs} (when set). A request
 * that produced fewer than two content chunks has no ITL and meets the ITL objective. With neither
 * objective set, {@link #defined()} is false and every ok request counts.
 *
 * <p>SLO attainment = requests meeting the objectives / all requests (failures count as misses);
 * goodput = requests meeting the objectives / run duration (s).
 *
 * @param ttftMs TTFT objective in ms, or {@code null}
 * @param itlMs  mean ITL objective in ms, or {@code null}
 */
public record SloPolicy(Double ttftMs, Double itlMs) {

    public static final SloPolicy NONE = new SloPolicy(null, null);

    public boolean defined() {
        return ttftMs != null || itlMs != null;
    }

    public boolean meets(boolean ok, double ttft, double itlMean) {
        if (!ok) {
            return false;
        }
        if (ttftMs != null && !(ttft <= ttftMs)) {
            return false;
        }
        return itlMs == null || Double.isNaN(itlMean) || itlMean <= itlMs;
    }
}
