package io.flotilla.bench;

import io.flotilla.bench.client.ClusterAdmin;
import io.flotilla.bench.client.RouterAdmin;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The cluster's KV tiers around one run: before it, every worker's capacity (the same-capacity LRU is
 * sized from it) and hit counters; after it, the hits per tier since. Workers are listed by the router
 * and asked with {@code WorkerService.GetKvTierStats}; a cluster that cannot be asked gives nothing
 * (reported on {@code err}), never a failed run.
 */
final class TierStatsProbe {

    private final long capacityBlocks;
    private final Map<String, Long> hitsBefore;

    private TierStatsProbe(long capacityBlocks, Map<String, Long> hitsBefore) {
        this.capacityBlocks = capacityBlocks;
        this.hitsBefore = hitsBefore;
    }

    static TierStatsProbe read(String routerUrl, String routerGrpc, PrintStream err) {
        long[] capacity = new long[1];
        Map<String, Long> hits = totals(routerUrl, routerGrpc, err, capacity);
        return new TierStatsProbe(capacity[0], hits);
    }

    /** Every worker's tiers together, in blocks; 0 when unknown. */
    long capacityBlocks() {
        return capacityBlocks;
    }

    /**
     * Prompt tokens found per tier since {@link #read}; empty when either reading failed or no worker has a
     * tier below the device.
     */
    Map<String, Long> hitsSince(String routerUrl, String routerGrpc, PrintStream err) {
        if (hitsBefore.isEmpty()) {
            return Map.of();
        }
        Map<String, Long> after = totals(routerUrl, routerGrpc, err, new long[1]);
        Map<String, Long> out = new LinkedHashMap<>();
        after.forEach((tier, n) -> out.put(tier, n - hitsBefore.getOrDefault(tier, 0L)));
        return out;
    }

    private static Map<String, Long> totals(String routerUrl, String routerGrpc, PrintStream err, long[] capacity) {
        Map<String, Long> hits = new LinkedHashMap<>();
        try (ClusterAdmin admin = new RouterAdmin(routerUrl, routerGrpc)) {
            boolean lowerTiers = false;
            for (ClusterAdmin.Worker w : admin.workers()) {
                for (ClusterAdmin.TierCount t : admin.kvTiers(w)) {
                    capacity[0] += t.capacityBlocks();
                    hits.merge(t.tier(), t.hitTokens(), Long::sum);
                    lowerTiers |= !t.tier().equals("device");
                }
            }
            // Workers without lower tiers report only their device capacity, not its hits: every hit of
            // the run is then a device hit, and the per-tier rates are left unknown rather than shown as 0.
            return lowerTiers ? hits : Map.of();
        } catch (RuntimeException e) {
            err.println("bench: cannot read the workers' KV tiers (" + e.getMessage() + "); no per-tier hit rates and no "
                    + "same-capacity LRU unless --oracle-lru-blocks is given");
            capacity[0] = 0;
            return Map.of();
        }
    }
}
