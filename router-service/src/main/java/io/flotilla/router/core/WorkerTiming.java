package io.flotilla.router.core;

import java.util.Optional;

/**
 * A worker's advertised engine timing coefficients (as {@code EngineTiming} in workers.proto carries them).
 *
 * <pre>
 * prefill_ms(t) = max(0, a·t² + b·t + c) / speedup      t = new (uncached) prompt tokens; 0 when t ≤ 0
 * decode_ms(u)  = max(0, d2·u² + d1·u + d0) / speedup   u = KV usage fraction, clamped to [0, 1]
 * </pre>
 *
 * @param speedup divides both polynomials; must be positive (an advertised 0 means "no speedup" = 1)
 */
public record WorkerTiming(double prefillA, double prefillB, double prefillC,
                           double decodeD2, double decodeD1, double decodeD0, double speedup) {

    public WorkerTiming {
        double[] all = {prefillA, prefillB, prefillC, decodeD2, decodeD1, decodeD0, speedup};
        for (double v : all) {
            if (!Double.isFinite(v)) {
                throw new IllegalArgumentException("timing coefficients must be finite");
            }
        }
        if (speedup <= 0) {
            throw new IllegalArgumentException("speedup must be positive: " + speedup);
        }
    }

    /** Milliseconds to prefill {@code tokens} new tokens in one pass; 0 for none. */
    public double prefillMs(long tokens) {
        if (tokens <= 0) {
            return 0;
        }
        double t = tokens;
        return Math.max(0, prefillA * t * t + prefillB * t + prefillC) / speedup;
    }

    /**
     * Milliseconds to prefill {@code prompts} queued prompts of {@code tokens} tokens in total, one pass
     * each, assuming equal lengths: Σ prefill_ms(Q/n) = (a·Q²/n + b·Q + c·n) / speedup. Equals
     * {@link #prefillMs} for one prompt; 0 for no tokens.
     */
    public double queuedPrefillMs(long tokens, int prompts) {
        if (tokens <= 0) {
            return 0;
        }
        double q = tokens;
        int n = Math.max(1, prompts);
        return Math.max(0, prefillA * q * q / n + prefillB * q + prefillC * n) / speedup;
    }

    /** Milliseconds of one decode step at KV usage fraction {@code usage}. */
    public double decodeMs(double usage) {
        double u = Math.min(1, Math.max(0, usage));
        return Math.max(0, decodeD2 * u * u + decodeD1 * u + decodeD0) / speedup;
    }
}
