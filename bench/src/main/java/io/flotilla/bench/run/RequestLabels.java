package io.flotilla.bench.run;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Who sends a request and at which priority: {@code --tenants} and {@code --priority} give shares
 * (e.g. {@code a:10,b:1} or {@code interactive:1,batch:3}); each request draws its tenant and band from
 * them with a generator seeded by the run seed and the request number, so reruns label alike.
 *
 * @param tenant   sent as the request's {@code user}; empty when no tenants were given
 * @param apiKey   sent as {@code Authorization: Bearer} instead of {@code --api-key}; null for that one
 * @param priority sent as {@code x-flotilla-priority}; empty when none was given
 */
public record RequestLabels(String tenant, String apiKey, String priority) {

    public static final RequestLabels NONE = new RequestLabels("", null, "");

    /** Draws labels for request {@code id}. */
    public interface Labeler {
        RequestLabels label(long id);
    }

    /** A share of a spec: a name, its weight and, for tenants, an optional API key. */
    public record Share(String name, double weight, String apiKey) {
    }

    /** {@code name:weight[:apikey],…}; a bare {@code name} has weight 1. */
    public static List<Share> parse(String option, String spec, boolean keys) {
        List<Share> out = new ArrayList<>();
        for (String part : spec.split(",")) {
            String[] f = part.strip().split(":", keys ? 3 : 2);
            if (f[0].isBlank()) {
                throw new IllegalArgumentException(option + ": empty name in '" + spec + "'");
            }
            double w;
            try {
                w = f.length > 1 ? Double.parseDouble(f[1]) : 1;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + ": weight of '" + f[0] + "' must be a number");
            }
            if (!(w > 0) || Double.isInfinite(w)) {
                throw new IllegalArgumentException(option + ": weight of '" + f[0] + "' must be positive");
            }
            out.add(new Share(f[0], w, f.length > 2 && !f[2].isBlank() ? f[2] : null));
        }
        return out;
    }

    /** A labeler drawing from {@code tenants} and {@code priorities} (either may be empty). */
    public static Labeler labeler(List<Share> tenants, List<Share> priorities, long seed) {
        if (tenants.isEmpty() && priorities.isEmpty()) {
            return id -> NONE;
        }
        return id -> {
            SplittableRandom r = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + id);
            Share t = draw(tenants, r);
            Share p = draw(priorities, r);
            return new RequestLabels(t == null ? "" : t.name(), t == null ? null : t.apiKey(), p == null ? "" : p.name());
        };
    }

    private static Share draw(List<Share> shares, SplittableRandom r) {
        if (shares.isEmpty()) {
            return null;
        }
        double total = shares.stream().mapToDouble(Share::weight).sum();
        double x = r.nextDouble() * total;
        for (Share s : shares) {
            x -= s.weight();
            if (x < 0) {
                return s;
            }
        }
        return shares.get(shares.size() - 1);
    }
}
