package io.flotilla.router.core;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.random.RandomGenerator;

/**
 * Decides which worker(s) should serve a request; it does not send the request there and books
 * nothing. {@link #decide} is a function of (request, snapshot) plus the picker's random generator
 * and round-robin cursor; the shell books a routed decision afterwards with {@link BookingLedger}.
 *
 * <p>Assembled from named plugins ({@link PluginRegistry}) per model ({@link PolicySpec}: the standard
 * formula, then the {@code default} section, then the model's own). Steps: filter ({@link FilterChain}) →
 * split into pools → drop busy workers ({@link BusyDetector}; all busy → BUSY) → optionally pick a prefill
 * worker (pairing below) → score each pool with its terms ({@link ModelPolicy}) → the mode's {@link Picker}.
 *
 * <p>Pools: the decode pool is the eligible DECODE workers, or the eligible aggregated workers when
 * there are no DECODE workers. The prefill pool is the eligible PREFILL workers.
 *
 * <p>Pairing: when the request allows it and a prefill pool exists, the best non-busy prefill worker P
 * is picked by the prefill-only cost (with cache credit in the prefill pool). If P's uncached prompt,
 * isl − H_P, exceeds {@code disagg.minUncachedTokens}, the decision names P and a decode worker D picked
 * by the decode-only cost. Otherwise (or when every prefill worker is busy: the pool is overloaded)
 * the request runs aggregated on a decode-pool worker picked by the full cost.
 *
 * <p>Pruning: a greedy decision ({@code kv}/{@code load}, temperature 0) by the standard formula on an aggregated pool scores only the
 * {@link CandidateSet} (holders of the prompt's blocks plus the least-loaded workers from the snapshot's
 * {@link WorkerRanking}); its javadoc states what that costs against scoring every worker. Every other
 * decision scores every worker, and says why in its {@link Scan}.
 *
 * <p>Degradation: in {@code kv} mode, overlap from the indexer gives mode KV, from the approximate
 * index KV_APPROX, and none at all LOAD (no cache credit). Missing data never fails a request.
 */
public final class RoutingPolicy {

    private final RouterConfig config;
    private final Picker picker;
    private final BusyDetector busy;
    private final PluginRegistry plugins;
    private final ModelPolicy defaultPolicy;
    private final Map<String, ModelPolicy> byModel = new HashMap<>();
    private final CandidateSet candidates;

    /** @param random used by the random baseline and softmax sampling; thread-safe if decide runs concurrently */
    public RoutingPolicy(RouterConfig config, RandomGenerator random) {
        this(config, PluginRegistry.standard(), random);
    }

    /**
     * Assembles every policy section of {@code config} from {@code plugins}; a name it does not know fails here,
     * at start-up, not on a request.
     */
    public RoutingPolicy(RouterConfig config, PluginRegistry plugins, RandomGenerator random) {
        this.config = config;
        this.plugins = plugins;
        this.picker = PluginRegistry.picker(config.strategy(), config.temperature(), random);
        this.busy = new BusyDetector(config.busy());
        this.defaultPolicy = assemble(PolicySpec.DEFAULT);
        for (String model : config.policies().keySet()) {
            if (!model.equals(PolicySpec.DEFAULT)) {
                byModel.put(model, assemble(model));
            }
        }
        this.candidates = new CandidateSet(config.pruning().leastLoaded(), busy, config.loadMerge(), config.weights());
    }

    private ModelPolicy assemble(String model) {
        PolicySpec spec = PolicySpec.forModel(model, config.weights(), config.policies());
        return plugins.assemble(spec, spec.scorers().equals(PolicySpec.standard(config.weights()).scorers()));
    }

    /** The model a worker's load cost ({@link WorkerRanking#loadCost}) is priced with for {@code config}. */
    public static CostModel loadCostModel(RouterConfig config) {
        return PluginRegistry.standard().assemble(PolicySpec.standard(config.weights()), true).full(false);
    }

    /** The policy {@code model}'s requests are decided by. */
    private ModelPolicy policyFor(String model) {
        ModelPolicy p = byModel.get(model);
        return p != null ? p : defaultPolicy;
    }

    public RouterConfig config() {
        return config;
    }

    /** The signals the snapshot must carry for this policy; anything else the shell may skip fetching. */
    public Set<Signal> requires() {
        Set<Signal> s = EnumSet.noneOf(Signal.class);
        if (byCost()) {
            boolean credit = config.strategy() == Strategy.KV;
            s.addAll(defaultPolicy.requires(credit));
            byModel.values().forEach(p -> s.addAll(p.requires(credit)));
        }
        if (busy.enabled()) {
            s.add(Signal.LOAD);
        }
        return s;
    }

    public Decision decide(RoutingRequest request, ClusterSnapshot snapshot) {
        ModeUsed mode = modeFor(snapshot.source());
        boolean credit = mode == ModeUsed.KV || mode == ModeUsed.KV_APPROX;
        ModelPolicy policy = policyFor(request.model());
        Scan.FullScan why;
        int walked = 0;
        if (!config.pruning().enabled()) {
            why = Scan.FullScan.DISABLED;
        } else if (!byCost() || config.temperature() > 0) {
            why = Scan.FullScan.NOT_GREEDY;
        } else if (!policy.prunable()) {
            why = Scan.FullScan.CUSTOM_POLICY;
        } else {
            CandidateSet.Collected c = candidates.collect(request, snapshot, credit, policy.filters(), policy.full(credit));
            if (c.pool() != null) {
                return routed(request, mode, c.pool(), c.unit(), c.costs())
                        .withScan(new Scan(c.pool().size(), c.walked(), Scan.FullScan.NONE));
            }
            why = c.fullScan();
            walked = c.walked();
        }
        return scanAll(request, snapshot, mode, credit, policy).withScan(new Scan(snapshot.workers().size(), walked, why));
    }

    /** Scores every worker of the snapshot. */
    private Decision scanAll(RoutingRequest request, ClusterSnapshot snapshot, ModeUsed mode, boolean credit,
                             ModelPolicy policy) {
        List<Candidate> decode = new ArrayList<>();
        List<Candidate> aggregated = new ArrayList<>();
        List<Candidate> prefill = new ArrayList<>();
        for (WorkerView w : snapshot.workers()) {
            if (!policy.filters().admits(request, w)) {
                continue;
            }
            KvOverlap overlap = credit ? snapshot.tieredOf(w.id()) : KvOverlap.NONE;
            Candidate c = Candidate.of(request, w, overlap, snapshot.activeLoadOf(w.id()),
                    snapshot.bookedAtReportOf(w.id()), config.loadMerge());
            (w.isPrefill() ? prefill : w.isDecode() ? decode : aggregated).add(c);
        }
        List<Candidate> pool = servingPool(decode, aggregated);
        if (pool.isEmpty()) {
            return Decision.noWorker(mode);
        }
        List<Candidate> freePool = notBusy(pool);
        if (freePool.isEmpty()) {
            CostUnit unit = CostUnit.of(pool);
            Map<String, Double> scores = scores(pool, costs(policy.full(credit), request, unit, pool), "");
            return Decision.busy(mode, unit, scores, busy.retryAfterMs(pool));
        }
        if (request.allowDisagg() && !prefill.isEmpty()) {
            Decision paired = tryDisaggregated(request, mode, credit, policy, prefill, freePool);
            if (paired != null) {
                return paired;
            }
        }
        CostUnit unit = CostUnit.of(freePool);
        return routed(request, mode, freePool, unit, costs(policy.full(credit), request, unit, freePool));
    }

    /** Picks from {@code freePool} (free workers of the serving pool, in id order) by their full costs in {@code unit}. */
    private Decision routed(RoutingRequest request, ModeUsed mode, List<Candidate> freePool, CostUnit unit,
                            double[] costs) {
        Candidate d = freePool.get(picker.pick(freePool, costs));
        return new Decision(Decision.Outcome.ROUTED, d.id(), d.worker().endpoint(), "", "", d.overlapBlocks(), 0,
                d.newTokens(), d.newBlocks(request), scores(freePool, costs, ""), mode, unit, 0, d.onboardHost(),
                d.onboardDisk());
    }

    /**
     * Per model, what a Route would meet now, worker by worker: the same pools, load merge and busy
     * rule as {@link #decide} (a probe request of the worker's block size, no overlap: being busy does
     * not depend on the prompt). Models sorted by name.
     */
    public List<Capacity> capacity(ClusterSnapshot snapshot) {
        Map<String, List<WorkerView>> byModel = new TreeMap<>();
        for (WorkerView w : snapshot.workers()) {
            byModel.computeIfAbsent(w.model(), m -> new ArrayList<>()).add(w);
        }
        List<Capacity> out = new ArrayList<>(byModel.size());
        byModel.forEach((model, workers) -> {
            List<Capacity.Headroom> headroom = new ArrayList<>(workers.size());
            List<Candidate> decode = new ArrayList<>();
            List<Candidate> aggregated = new ArrayList<>();
            for (WorkerView w : workers) {
                Candidate c = Candidate.of(RoutingRequest.probe(model, w.blockSize()), w, 0,
                        snapshot.activeLoadOf(w.id()), snapshot.bookedAtReportOf(w.id()), config.loadMerge());
                headroom.add(new Capacity.Headroom(w, isBusy(c), c.decodeBlocks(), c.queuedPrefillTokens(),
                        c.queuedPrefills()));
                if (w.acceptsRequests() && !w.isPrefill()) {
                    (w.isDecode() ? decode : aggregated).add(c);
                }
            }
            List<Candidate> pool = servingPool(decode, aggregated);
            int free = notBusy(pool).size();
            out.add(new Capacity(model, !pool.isEmpty() && free == 0, free, headroom));
        });
        return out;
    }

    /** The workers a request is served by: the decode pool when there is one, else the aggregated workers. */
    private static List<Candidate> servingPool(List<Candidate> decode, List<Candidate> aggregated) {
        return decode.isEmpty() ? aggregated : decode;
    }

    private Decision tryDisaggregated(RoutingRequest request, ModeUsed mode, boolean credit, ModelPolicy policy,
                                      List<Candidate> prefillPool, List<Candidate> freeDecode) {
        List<Candidate> freePrefill = notBusy(prefillPool);
        if (freePrefill.isEmpty()) {
            return null; // prefill pool overloaded: run aggregated
        }
        CostUnit prefillUnit = CostUnit.of(freePrefill);
        double[] prefillCosts = costs(policy.prefill(credit), request, prefillUnit, freePrefill);
        Candidate p = freePrefill.get(picker.pick(freePrefill, prefillCosts));
        if (p.newTokens() <= config.disagg().minUncachedTokens()) {
            return null; // short uncached prompt: prefilling locally on the decode worker is cheaper
        }
        CostUnit unit = CostUnit.of(freeDecode);
        double[] decodeCosts = costs(policy.decode(), request, unit, freeDecode);
        Candidate d = freeDecode.get(picker.pick(freeDecode, decodeCosts));
        Map<String, Double> scores = scores(freeDecode, decodeCosts, "");
        scores.putAll(scores(freePrefill, prefillCosts, "prefill:"));
        return new Decision(Decision.Outcome.ROUTED, d.id(), d.worker().endpoint(), p.id(), p.worker().endpoint(),
                d.overlapBlocks(), p.overlapBlocks(), p.newTokens(), d.newBlocks(request), scores, mode, unit, 0,
                p.onboardHost(), p.onboardDisk());
    }

    private ModeUsed modeFor(OverlapSource source) {
        return switch (config.strategy()) {
            case KV -> switch (source) {
                case INDEXER -> ModeUsed.KV;
                case APPROX -> ModeUsed.KV_APPROX;
                case NONE -> ModeUsed.LOAD;
            };
            case LOAD -> ModeUsed.LOAD;
            case ROUND_ROBIN -> ModeUsed.ROUND_ROBIN;
            case RANDOM -> ModeUsed.RANDOM;
        };
    }

    /** Baselines ignore costs: they get zeros and no scores, so they cost nothing to compute. */
    private double[] costs(CostModel model, RoutingRequest request, CostUnit unit, List<Candidate> pool) {
        return byCost() ? model.costs(request, unit, pool) : new double[pool.size()];
    }

    private boolean byCost() {
        return config.strategy() == Strategy.KV || config.strategy() == Strategy.LOAD;
    }

    private Map<String, Double> scores(List<Candidate> pool, double[] costs, String prefix) {
        if (!byCost()) {
            return new HashMap<>();
        }
        Map<String, Double> out = new HashMap<>(pool.size() * 2);
        for (int i = 0; i < costs.length; i++) {
            out.put(prefix.isEmpty() ? pool.get(i).id() : prefix + pool.get(i).id(), costs[i]);
        }
        return out;
    }

    private List<Candidate> notBusy(List<Candidate> pool) {
        if (!busy.enabled()) {
            return pool;
        }
        List<Candidate> free = new ArrayList<>(pool.size());
        for (Candidate c : pool) {
            if (!busy.isBusy(c)) {
                free.add(c);
            }
        }
        return free;
    }

    private boolean isBusy(Candidate c) {
        return busy.enabled() && busy.isBusy(c);
    }
}
