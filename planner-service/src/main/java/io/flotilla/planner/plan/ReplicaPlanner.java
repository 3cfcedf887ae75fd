package io.flotilla.planner.plan;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.model.PerformanceModel;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Replicas needed for a load, from the performance model (the sizing rule):
 * <pre>
 * for each interval k of the horizon (the one just observed and the next ⌈ready_time/interval⌉ + 1 forecast):
 *   prefill_k = λ_k·ISL_k·(1 − cached)·(1 + headroom) / prefill_tps(ISL_k·(1 − cached), TTFT_target / f_ttft)
 *   decode_k  = λ_k·OSL_k·(1 + headroom)              / decode_tps(ISL_k + OSL_k/2,      ITL_target / f_itl)
 *   aggregated_k = prefill_k + decode'_k     (one pool doing both: busy fractions add up)
 *   decode'_k    = decode_k with decode_tps at the ITL an aggregated replica's sequences see: a step that
 *                  prefills holds them for a prompt's prefill, ρ = prefill_k / (prefill_k + decode_k) of
 *                  the time ({@link PerformanceModel#decodeCapacityBesidePrefill})
 * need(pool) = max_k pool_k
 * </pre>
 * where prefill_tps and decode_tps are one replica's throughputs at the (corrected) targets
 * ({@link PerformanceModel}) and f are the correction factors. Taking the maximum over the horizon is
 * the cold-start lookahead: a replica asked for now serves from now + ready_time on, so the pool is
 * sized for the load expected then, and is not shrunk just before a predicted rise. Pure.
 */
public final class ReplicaPlanner {

    /** Fractional replicas needed per pool, and the capacity behind each (for the decision's reason). */
    public record Sizing(Map<Pool, Double> need, Map<Pool, Double> tokensPerReplica, Map<Pool, Integer> peakStep,
                         boolean targetsReachable) {
        public double need(Pool p) {
            return need.getOrDefault(p, 0.0);
        }
    }

    private final PerformanceModel model;
    private final double ttftTargetMs;
    private final double itlTargetMs;
    private final double headroom;

    public ReplicaPlanner(PerformanceModel model, double ttftTargetMs, double itlTargetMs, double headroom) {
        this.model = model;
        this.ttftTargetMs = ttftTargetMs;
        this.itlTargetMs = itlTargetMs;
        this.headroom = headroom;
    }

    /**
     * @param horizon     demand per interval, index 0 = the interval just observed
     * @param fTtft       TTFT correction factor
     * @param fItl        ITL correction factor
     */
    public Sizing size(List<Demand> horizon, double fTtft, double fItl) {
        Map<Pool, Double> need = new EnumMap<>(Pool.class);
        Map<Pool, Double> perReplica = new EnumMap<>(Pool.class);
        Map<Pool, Integer> peak = new EnumMap<>(Pool.class);
        boolean reachable = true;
        for (Pool p : Pool.values()) {
            need.put(p, 0.0);
        }
        for (int k = 0; k < horizon.size(); k++) {
            Demand d = horizon.get(k);
            if (!(d.rate() > 0) || !Double.isFinite(d.isl()) || !Double.isFinite(d.osl())) {
                continue;
            }
            PerformanceModel.Capacity pc = model.prefillCapacity(d.uncachedIsl(), ttftTargetMs / fTtft);
            PerformanceModel.Capacity dc = model.decodeCapacity(d.context(), itlTargetMs / fItl);
            reachable &= pc.targetMet() && dc.targetMet();
            double prefill = d.prefillTokensPerSecond() * (1 + headroom) / pc.tokensPerSecond();
            double decode = d.decodeTokensPerSecond() * (1 + headroom) / dc.tokensPerSecond();
            raise(need, peak, Pool.PREFILL, prefill, k);
            raise(need, peak, Pool.DECODE, decode, k);
            double share = prefill + decode > 0 ? prefill / (prefill + decode) : 0;
            PerformanceModel.Capacity ac = model.decodeCapacityBesidePrefill(d.context(), itlTargetMs / fItl, d.uncachedIsl(), share);
            raise(need, peak, Pool.AGGREGATED, prefill + d.decodeTokensPerSecond() * (1 + headroom) / ac.tokensPerSecond(), k);
            if (peak.get(Pool.PREFILL) == k) {
                perReplica.put(Pool.PREFILL, pc.tokensPerSecond());
            }
            if (peak.get(Pool.DECODE) == k) {
                perReplica.put(Pool.DECODE, dc.tokensPerSecond());
            }
        }
        return new Sizing(need, perReplica, peak, reachable);
    }

    private static void raise(Map<Pool, Double> need, Map<Pool, Integer> peak, Pool p, double v, int k) {
        if (!peak.containsKey(p) || v > need.get(p)) {
            need.put(p, v);
            peak.put(p, k);
        }
    }
}
