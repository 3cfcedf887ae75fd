package io.flotilla.router.core;

import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seeded simulations of the policy + bookings against simulated engines (see {@link SimCluster}).
 * Each prints one summary line per run; the assertions are the named invariants.
 */
class RoutingSimulationTest {

    private static final int CAPACITY = 16_384;

    private static SimCluster cluster(int workers) {
        SimCluster c = new SimCluster();
        for (int i = 0; i < workers; i++) {
            c.addWorker("w" + i, Fixtures.MOCKER, CAPACITY);
        }
        return c;
    }

    private static RoutingPolicy policy(Strategy strategy, long seed) {
        return new RoutingPolicy(RouterDefaults.config().withStrategy(strategy), new Random(seed));
    }

    /** Cache affinity only: the worker holding the longest prefix, whatever its queue. */
    static Decision cacheOnly(RoutingRequest r, ClusterSnapshot s) {
        WorkerView best = null;
        int bestOverlap = -1;
        for (WorkerView w : s.workers()) {
            if (FilterChain.STANDARD.admits(r, w) && s.overlapOf(w.id()) > bestOverlap) {
                best = w;
                bestOverlap = s.overlapOf(w.id());
            }
        }
        return new Decision(Decision.Outcome.ROUTED, best.id(), best.endpoint(), "", "", bestOverlap, 0,
                r.islTokens() - r.cachedTokens(bestOverlap), r.bookedBlocks(), Map.of(), ModeUsed.KV, CostUnit.BLOCKS, 0);
    }

    /** 4 workers; every prompt = the same 4096-token system prompt + 256 own tokens; 4 rps for 5 s, then up to 160 rps. */
    private static SimCluster hotPrompt(String label, Consumer<SimCluster> routers) {
        SimCluster c = cluster(4);
        routers.accept(c);
        List<Long> times = Workloads.poisson(11, 25_000, t -> t < 5_000 ? 4 : 4 + 156.0 * (t - 5_000) / 20_000);
        c.run(Workloads.sharedSystemPrompt(times, 256, 16, 64, 1, 11));
        System.out.println(SimStats.line(label + " 0-5s", c, SimStats.window(c, 0, 5_000)));
        System.out.println(SimStats.line(label + " 20-25s", c, SimStats.window(c, 20_000, 25_000)));
        return c;
    }

    @Test
    void aPopularSystemPromptSpreadsOnceTheOwnersQueueCostsMoreThanRecomputing() {
        SimCluster kv = hotPrompt("kv", c -> c.addReplica("r0", policy(Strategy.KV, 1)));
        SimCluster cacheOnly = hotPrompt("cache-only", c -> c.addReplica("r0", RoutingSimulationTest::cacheOnly,
                EnumSet.of(Signal.KV_OVERLAP)));
        SimCluster load = hotPrompt("load", c -> c.addReplica("r0", policy(Strategy.LOAD, 1)));

        List<SimCluster.Outcome> kvLow = SimStats.window(kv, 0, 5_000);
        List<SimCluster.Outcome> kvHigh = SimStats.window(kv, 20_000, 25_000);
        assertThat(kv.violations).isEmpty();
        assertThat(SimStats.count(kv.outcomes, o -> !o.decision().routed())).isZero();
        // low load: everything stays on the cache owner
        assertThat(SimStats.byWorker(kvLow)).hasSize(1);
        // high load: the prompt spreads to every worker, each recomputing it about once
        assertThat(SimStats.byWorker(kvHigh)).hasSize(4).allSatisfy((w, n) -> assertThat(n).isGreaterThan(kvHigh.size() / 8));
        assertThat(SimStats.count(kv.outcomes, o -> o.cachedTokens() == 0)).isLessThanOrEqualTo(6);
        assertThat(SimStats.cachedFraction(kvHigh)).isGreaterThan(0.9);
        // Dynamo #737: cache affinity alone piles everything on the owner and its queue explodes
        assertThat(SimStats.byWorker(SimStats.window(cacheOnly, 20_000, 25_000))).hasSize(1);
        assertThat(SimStats.percentileTtft(SimStats.window(cacheOnly, 20_000, 25_000), 0.95))
                .isGreaterThan(20 * SimStats.percentileTtft(kvHigh, 0.95));
        // load alone recomputes the prompt at low load, where the cost model keeps it cached
        assertThat(SimStats.cachedFraction(kvLow)).isGreaterThan(SimStats.cachedFraction(SimStats.window(load, 0, 5_000)));
    }

    @Test
    void multiTurnSessionsStayOnTheirWorkerWhileLoadIsEven() {
        Map<String, Double> stayed = new HashMap<>();
        Map<String, Double> cached = new HashMap<>();
        for (Strategy strategy : List.of(Strategy.KV, Strategy.ROUND_ROBIN)) {
            SimCluster c = cluster(4);
            c.addReplica("r0", policy(strategy, 2));
            // 18 sessions × 8 turns; 2048-token first prompt, +256 tokens per turn; a turn every 4 s
            c.run(Workloads.sessions(18, 8, 60, 4_000, 128, 16, 64));
            Map<String, String> last = new HashMap<>();
            Map<String, Integer> firstTurns = new HashMap<>();
            int same = 0;
            int later = 0;
            for (SimCluster.Outcome o : c.outcomes.stream()
                    .sorted((a, b) -> Long.compare(a.arrival().atMs(), b.arrival().atMs())).toList()) {
                String session = o.arrival().request().requestId().split("-")[0];
                String prev = last.put(session, o.worker());
                if (prev == null) {
                    firstTurns.merge(o.worker(), 1, Integer::sum);
                } else {
                    later++;
                    same += prev.equals(o.worker()) ? 1 : 0;
                }
            }
            stayed.put(strategy.configName(), (double) same / later);
            cached.put(strategy.configName(), SimStats.cachedFraction(c.outcomes));
            System.out.println(SimStats.line(strategy.configName(), c, c.outcomes) + " stayed=" + same + "/" + later
                    + " sessionsPerWorker=" + firstTurns);
            assertThat(c.violations).isEmpty();
            if (strategy == Strategy.KV) {
                assertThat(firstTurns).hasSize(4).allSatisfy((w, n) -> assertThat(n).isGreaterThanOrEqualTo(3));
            }
        }
        assertThat(stayed.get("kv")).isGreaterThanOrEqualTo(0.95);
        assertThat(stayed.get("round-robin")).isLessThan(0.2);
        assertThat(cached.get("kv")).isGreaterThan(cached.get("round-robin") + 0.1);
    }

    @Test
    void twoReplicasSharingBookingsKeepTheLoadBalancedAndWithoutSharingTheyHerd() {
        Map<Boolean, Double> spread = new HashMap<>();
        for (boolean share : List.of(true, false)) {
            SimCluster c = cluster(4);
            c.shareSync = share;
            c.reportIntervalMs = 1_000; // load reports lag; bookings from the peer arrive within 5 ms
            c.addReplica("r0", policy(Strategy.KV, 3));
            c.addReplica("r1", policy(Strategy.KV, 4));
            c.run(Workloads.unique(Workloads.poisson(5, 60_000, t -> 40), 64, 256, 2, 5));
            spread.put(share, SimStats.meanSpread(c));
            System.out.println(SimStats.line(share ? "2 replicas, shared" : "2 replicas, unshared", c, c.outcomes)
                    + " echoesIgnored=" + c.echoesIgnored);
            assertThat(c.violations).isEmpty();
            assertThat(c.echoesIgnored).as("every change comes back to its replica and is ignored")
                    .isEqualTo(3 * c.outcomes.size());
            for (SimCluster.Replica r : c.replicas) {
                assertThat(r.ledger.sequences().size()).as("no booking leaks").isZero();
                assertThat(r.ledger.sequences().loads()).isEmpty();
            }
        }
        assertThat(spread.get(true)).isLessThan(2.0);
        assertThat(spread.get(false)).isGreaterThan(2 * spread.get(true));
    }

    @Test
    void membershipChangesAreHandledByTheSnapshot() {
        SimCluster c = cluster(4);
        c.replaceView(Fixtures.withBlockSize(Fixtures.worker("w-bs32"), 32));
        c.replaceView(Fixtures.withModel(Fixtures.worker("w-other-model"), "other"));
        c.addWorker("w-bs32-engine", Fixtures.MOCKER, CAPACITY); // never eligible: see below
        c.replaceView(Fixtures.withBlockSize(c.membership.get("w-bs32-engine"), 32));
        c.addReplica("r0", policy(Strategy.KV, 6));
        c.at(10_000, () -> c.setRoutable("w1", false));                   // a failed call marks it suspect
        c.at(15_000, () -> c.replaceView(c.membership.get("w2").withState(WorkerView.State.DRAINING)));
        c.at(20_000, () -> c.setRoutable("w1", true));                    // it answers again
        c.run(Workloads.unique(Workloads.poisson(8, 30_000, t -> 10), 32, 64, 1, 8));

        System.out.println(SimStats.line("membership", c, c.outcomes));
        assertThat(c.violations).isEmpty();
        assertThat(SimStats.count(c.outcomes, o -> !o.decision().routed())).isZero();
        assertThat(SimStats.byWorker(c.outcomes)).doesNotContainKeys("w-bs32", "w-other-model", "w-bs32-engine");
        assertThat(SimStats.byWorker(SimStats.window(c, 10_000, 20_000))).doesNotContainKey("w1");
        assertThat(SimStats.byWorker(SimStats.window(c, 20_000, 30_000))).containsKey("w1");
        assertThat(SimStats.byWorker(SimStats.window(c, 15_000, 30_000))).doesNotContainKey("w2");
        assertThat(SimStats.byWorker(SimStats.window(c, 0, 10_000))).containsKeys("w0", "w1", "w2", "w3");
    }

    @Test
    void anIndexerOutageFallsBackToTheApproximateIndexAndKeepsTheCacheOwner() {
        SimCluster c = cluster(4);
        c.addReplica("r0", policy(Strategy.KV, 7));
        c.at(10_000, () -> c.indexerUp = false);
        c.at(20_000, () -> c.indexerUp = true);
        c.run(Workloads.sharedSystemPrompt(Workloads.poisson(9, 30_000, t -> 4), 256, 16, 64, 1, 9));

        System.out.println(SimStats.line("indexer outage", c, c.outcomes));
        List<SimCluster.Outcome> outage = SimStats.window(c, 10_000, 20_000);
        assertThat(outage).isNotEmpty().allSatisfy(o -> assertThat(o.decision().modeUsed()).isEqualTo(ModeUsed.KV_APPROX));
        assertThat(SimStats.window(c, 20_000, 30_000))
                .allSatisfy(o -> assertThat(o.decision().modeUsed()).isEqualTo(ModeUsed.KV));
        assertThat(SimStats.byWorker(c.outcomes)).hasSize(1);
        assertThat(SimStats.cachedFraction(outage)).isGreaterThan(0.9);
    }
}
