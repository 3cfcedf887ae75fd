package io.flotilla.router.core;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * Chooses one candidate given the candidates' costs. Candidates arrive sorted by worker id (see
 * {@link ClusterSnapshot}), so a picker is deterministic given its random generator and cursor.
 * The random generator is the only state a picker touches; inject a thread-safe one (e.g.
 * {@code java.util.Random}) when decisions run concurrently.
 */
public interface Picker {

    /** Index into {@code candidates} (never empty); {@code costs} is index-aligned. */
    int pick(List<Candidate> candidates, double[] costs);

    /**
     * Temperature 0: the minimum cost; equal costs break toward the least-loaded candidate
     * ({@link Candidate#loadRank()}), then the smallest id. Temperature T > 0: samples candidate i with
     * probability ∝ exp(−n_i / T), where n_i = (cost_i − min) / (max − min) ∈ [0, 1] (all 0 when every
     * cost is equal), so T is independent of the cost unit.
     */
    static Picker byCost(double temperature, RandomGenerator random) {
        if (!(temperature >= 0) || Double.isInfinite(temperature)) {
            throw new IllegalArgumentException("temperature must be finite and >= 0: " + temperature);
        }
        return temperature == 0 ? Picker::argmin : (candidates, costs) -> softmax(candidates, costs, temperature, random);
    }

    /** Cycles through the candidates in id order, ignoring costs. Thread-safe. */
    static Picker roundRobin() {
        AtomicLong cursor = new AtomicLong();
        return (candidates, costs) -> (int) Math.floorMod(cursor.getAndIncrement(), (long) candidates.size());
    }

    /** Uniform choice, ignoring costs. */
    static Picker uniform(RandomGenerator random) {
        return (candidates, costs) -> random.nextInt(candidates.size());
    }

    /** Relative tolerance under which two costs count as equal. */
    double TIE_EPSILON = 1e-9;

    static int argmin(List<Candidate> candidates, double[] costs) {
        int best = 0;
        for (int i = 1; i < costs.length; i++) {
            if (better(candidates.get(i), costs[i], candidates.get(best), costs[best])) {
                best = i;
            }
        }
        return best;
    }

    private static boolean better(Candidate a, double costA, Candidate b, double costB) {
        double tolerance = TIE_EPSILON * Math.max(1.0, Math.max(Math.abs(costA), Math.abs(costB)));
        if (Math.abs(costA - costB) > tolerance) {
            return costA < costB;
        }
        if (a.loadRank() != b.loadRank()) {
            return a.loadRank() < b.loadRank();
        }
        return a.id().compareTo(b.id()) < 0;
    }

    private static int softmax(List<Candidate> candidates, double[] costs, double temperature, RandomGenerator random) {
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (double c : costs) {
            min = Math.min(min, c);
            max = Math.max(max, c);
        }
        double span = max - min;
        double[] weights = new double[costs.length];
        double total = 0;
        for (int i = 0; i < costs.length; i++) {
            double normalized = span > 0 ? (costs[i] - min) / span : 0;
            weights[i] = Math.exp(-normalized / temperature);
            total += weights[i];
        }
        double r = random.nextDouble() * total;
        for (int i = 0; i < weights.length; i++) {
            r -= weights[i];
            if (r < 0) {
                return i;
            }
        }
        return weights.length - 1; // r ran past the end through rounding
    }
}
