package io.flotilla.planner.plan;

/**
 * Load expected in one interval.
 *
 * @param rate           requests per second
 * @param isl            mean prompt tokens
 * @param osl            mean output tokens
 * @param cachedFraction fraction of prompt tokens served from the prefix cache (not prefilled again)
 */
public record Demand(double rate, double isl, double osl, double cachedFraction) {

    /** Prompt tokens per second the prefill-serving pool computes: λ·ISL·(1 − cached fraction). */
    public double prefillTokensPerSecond() {
        return rate <= 0 ? 0 : rate * isl * (1 - cachedFraction);
    }

    /** Output tokens per second the decode-serving pool generates: λ·OSL. */
    public double decodeTokensPerSecond() {
        return rate <= 0 ? 0 : rate * osl;
    }

    /** Prompt tokens one request's prefill computes: ISL·(1 − cached fraction). */
    public double uncachedIsl() {
        return isl * (1 - cachedFraction);
    }

    /** Mean context of a decoding sequence: ISL + OSL/2 (it grows from ISL to ISL + OSL). */
    public double context() {
        return isl + osl / 2;
    }
}
