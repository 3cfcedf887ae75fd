package io.flotilla.router.core;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/** Summaries of a finished {@link SimCluster} run. */
final class SimStats {

    private SimStats() {
    }

    static List<SimCluster.Outcome> window(SimCluster c, long fromMs, long toMs) {
        return c.outcomes.stream().filter(o -> o.arrival().atMs() >= fromMs && o.arrival().atMs() < toMs).toList();
    }

    static Map<String, Long> byWorker(List<SimCluster.Outcome> os) {
        return os.stream().filter(o -> o.decision().routed())
                .collect(Collectors.groupingBy(SimCluster.Outcome::worker, TreeMap::new, Collectors.counting()));
    }

    static long percentileTtft(List<SimCluster.Outcome> os, double p) {
        long[] v = os.stream().filter(o -> o.decision().routed()).mapToLong(SimCluster.Outcome::ttftMs).sorted().toArray();
        return v.length == 0 ? 0 : v[(int) Math.min(v.length - 1, Math.floor(p * v.length))];
    }

    static double cachedFraction(List<SimCluster.Outcome> os) {
        long cached = os.stream().filter(o -> o.decision().routed()).mapToLong(SimCluster.Outcome::cachedTokens).sum();
        long total = os.stream().filter(o -> o.decision().routed()).mapToLong(o -> o.arrival().request().islTokens()).sum();
        return total == 0 ? 0 : (double) cached / total;
    }

    static double meanSpread(SimCluster c) {
        return c.samples.stream().mapToInt(SimCluster.Sample::spread).average().orElse(0);
    }

    static long count(List<SimCluster.Outcome> os, Predicate<SimCluster.Outcome> p) {
        return os.stream().filter(p).count();
    }

    static String line(String name, SimCluster c, List<SimCluster.Outcome> os) {
        return String.format("%-22s workers=%s refused=%d p50ttft=%dms p95ttft=%dms cached=%.2f meanSpread=%.2f",
                name, byWorker(os), count(os, o -> !o.decision().routed()), percentileTtft(os, 0.5),
                percentileTtft(os, 0.95), cachedFraction(os), meanSpread(c));
    }
}
