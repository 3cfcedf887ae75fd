package io.flotilla.worker.engine.sim;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * How long one engine step takes, before the {@code speedup} factor is applied.
 *
 * <pre>
 * prefill_ms(t) = prefillA·t² + prefillB·t + prefillC      t = uncached prompt tokens computed in the step
 * decode_ms(u)  = max(1, decodeA·u² + decodeB·u + decodeC)  u = fraction of KV blocks referenced
 * step_ms       = prefill_ms(t)                      when the step only prefills
 *               = decode_ms(u)                       when it only decodes
 *               = max(prefill_ms(t), decode_ms(u))   when it does both
 * </pre>
 *
 * A mixed step costs the larger of the two, not the sum: it is one forward pass, and the prefill
 * fit's constant term already pays the pass's fixed cost that a sum would count twice. The default
 * coefficients are the simulated engine's reference profile (prefill on the order of 16.5 ms plus
 * 15 µs per token; decode 5.7 ms on an empty cache up to 34 ms on a full one).
 */
public record TimingModel(double prefillA, double prefillB, double prefillC,
                          double decodeA, double decodeB, double decodeC) {

    public static final TimingModel DEFAULT =
            new TimingModel(4.209989e-7, 1.518344e-2, 16.50142, -25.74, 54.01, 5.74);

    /** Decode steps never take less than this many milliseconds (before speedup). */
    public static final double MIN_DECODE_MS = 1.0;

    public TimingModel {
        double[] all = {prefillA, prefillB, prefillC, decodeA, decodeB, decodeC};
        for (double v : all) {
            if (!Double.isFinite(v)) {
                throw new IllegalArgumentException("timing coefficients must be finite: " + this);
            }
        }
    }

    /** Milliseconds to prefill {@code tokens} uncached tokens in one step; 0 for none. */
    public double prefillMs(long tokens) {
        if (tokens <= 0) {
            return 0;
        }
        double t = tokens;
        return Math.max(0, prefillA * t * t + prefillB * t + prefillC);
    }

    /** Milliseconds of a decode step when {@code kvUsage} of the KV blocks are referenced. */
    public double decodeMs(double kvUsage) {
        double u = Math.min(1, Math.max(0, kvUsage));
        return Math.max(MIN_DECODE_MS, decodeA * u * u + decodeB * u + decodeC);
    }

    /** Milliseconds of a step that prefills {@code prefillTokens} and decodes {@code decodes} sequences. */
    public double stepMs(long prefillTokens, int decodes, double kvUsage) {
        if (decodes == 0) {
            return prefillMs(prefillTokens);
        }
        double decode = decodeMs(kvUsage);
        return prefillTokens == 0 ? decode : Math.max(prefillMs(prefillTokens), decode);
    }

    /**
     * Reads a profile: keys {@code prefill.a}, {@code prefill.b}, {@code prefill.c}, {@code decode.a},
     * {@code decode.b}, {@code decode.c}; a missing key keeps {@code base}'s coefficient.
     */
    public static TimingModel fromProperties(Properties profile, TimingModel base) {
        return new TimingModel(
                read(profile, "prefill.a", base.prefillA), read(profile, "prefill.b", base.prefillB),
                read(profile, "prefill.c", base.prefillC), read(profile, "decode.a", base.decodeA),
                read(profile, "decode.b", base.decodeB), read(profile, "decode.c", base.decodeC));
    }

    /**
     * Loads a profile file: a measured performance profile (JSON from {@code bin/flotilla profile}, fitted by
     * {@link ProfileFit}), or properties over {@link #DEFAULT} (see {@link #fromProperties}).
     */
    public static TimingModel load(Path profileFile) throws IOException {
        return parse(Files.readString(profileFile, StandardCharsets.UTF_8));
    }

    /** As {@link #load}, from the file's text. */
    public static TimingModel parse(String profile) throws IOException {
        if (ProfileFit.isProfile(profile)) {
            return ProfileFit.fit(profile).model();
        }
        Properties p = new Properties();
        try (Reader r = new java.io.StringReader(profile)) {
            p.load(r);
        }
        return fromProperties(p, DEFAULT);
    }

    private static double read(Properties p, String key, double fallback) {
        String v = p.getProperty(key);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            return Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("timing profile key " + key + " is not a number: " + v, e);
        }
    }
}
