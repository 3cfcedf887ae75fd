package io.flotilla.router.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.statistics.Statistics;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.function.BiFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The policy assembled from named plugins against {@link ReferenceRoutingPolicy}, the policy with its five
 * cost models written out per strategy and pool: "every strategy's decision is the reference's" — the
 * same outcome, workers, endpoints, blocks, mode, unit, retry hint and scan, and scores equal within
 * 1e-9 relative (a pool's terms may be summed in another order). Fleets come from
 * {@link PrunedDecisionPropertyTest#scenario} with every strategy, temperatures above 0, pruning on and
 * off, and prefill/decode roles mixed in. {@link #aChangedWeightIsCaught} shows the comparison can fail.
 */
class AssembledPolicyDifferentialTest {

    record Case(RoutingRequest request, ClusterSnapshot snapshot, RouterConfig config) {
    }

    static Case of(long seed) {
        PrunedDecisionPropertyTest.Scenario s = PrunedDecisionPropertyTest.scenario(seed);
        Random rnd = new Random(~seed);
        RouterConfig config = s.config()
                .withStrategy(Strategy.values()[rnd.nextInt(Strategy.values().length)])
                .withTemperature(rnd.nextInt(4) == 0 ? rnd.nextDouble() : 0)
                .withDisagg(new RouterConfig.Disagg(rnd.nextInt(3) * 512));
        if (rnd.nextInt(4) == 0) {
            config = config.withPruning(RouterConfig.Pruning.OFF);
        }
        ClusterSnapshot snapshot = s.snapshot();
        if (rnd.nextInt(3) == 0) { // prefill and decode pools
            List<WorkerView> workers = new ArrayList<>();
            for (WorkerView w : snapshot.workers()) {
                int k = rnd.nextInt(3);
                workers.add(k == 2 ? w : withRole(w, k == 0 ? WorkerView.Role.PREFILL : WorkerView.Role.DECODE));
            }
            snapshot = new ClusterSnapshot(workers, snapshot.overlapBlocks(), snapshot.source(), snapshot.activeLoad(),
                    snapshot.bookedAtReport(), snapshot.tiered(), snapshot.ranking());
        }
        return new Case(s.request(), snapshot, config);
    }

    private static WorkerView withRole(WorkerView w, WorkerView.Role role) {
        return new WorkerView(w.id(), role, w.model(), w.blockSize(), w.kvLayout(), w.endpoint(), w.state(),
                w.routable(), w.timing(), w.totalKvBlocks(), w.load(), w.tiers(), w.adapters(), w.isolation(), w.embeds());
    }

    @Property(seed = "20261204", tries = 800)
    void everyStrategysDecisionIsTheReferences(@ForAll long seed) {
        Case c = of(seed);
        Decision reference = new ReferenceRoutingPolicy(c.config(), new Random(seed)).decide(c.request(), c.snapshot());
        RoutingPolicy assembled = new RoutingPolicy(c.config(), new Random(seed));
        Decision decision = assembled.decide(c.request(), c.snapshot());
        Statistics.label("outcome").collect(c.config().strategy(), reference.outcome(),
                reference.prefillWorkerId().isEmpty() ? "aggregated" : "paired");
        assertThat(difference(reference, decision)).isEmpty();
        assertThat(assembled.requires()).isEqualTo(new ReferenceRoutingPolicy(c.config(), new Random(0)).requires());
        assertThat(assembled.capacity(c.snapshot()))
                .isEqualTo(new ReferenceRoutingPolicy(c.config(), new Random(0)).capacity(c.snapshot()));
    }

    /** What differs between two decisions for the shell, or empty. */
    static Optional<String> difference(Decision expected, Decision actual) {
        if (!withoutScores(expected).equals(withoutScores(actual))) {
            return Optional.of("expected " + withoutScores(expected) + ", got " + withoutScores(actual));
        }
        if (!expected.scores().keySet().equals(actual.scores().keySet())) {
            return Optional.of("scored " + actual.scores().keySet() + ", expected " + expected.scores().keySet());
        }
        for (Map.Entry<String, Double> e : expected.scores().entrySet()) {
            double a = actual.scores().get(e.getKey());
            if (Math.abs(a - e.getValue()) > 1e-9 * Math.max(1, Math.abs(e.getValue()))) {
                return Optional.of(e.getKey() + " scored " + a + ", expected " + e.getValue());
            }
        }
        return Optional.empty();
    }

    private static Decision withoutScores(Decision d) {
        return new Decision(d.outcome(), d.workerId(), d.workerEndpoint(), d.prefillWorkerId(), d.prefillEndpoint(),
                d.overlapBlocks(), d.prefillOverlapBlocks(), d.newPrefillTokens(), d.newDecodeBlocks(), Map.of(),
                d.modeUsed(), d.unit(), d.retryAfterMs(), d.onboardHostBlocks(), d.onboardDiskBlocks())
                .withScan(d.scan());
    }

    /** Self-test: the assembled policy with the queue weighed twice differs from the reference somewhere. */
    @Test
    void aChangedWeightIsCaught() {
        int caught = caught((c, seed) -> new RoutingPolicy(c.config().withWeights(new RouterConfig.Weights(
                c.config().weights().prefill(), c.config().weights().decode(), 2 * c.config().weights().queue() + 0.5)),
                new Random(seed)).decide(c.request(), c.snapshot()));
        assertThat(caught).as("cases where a changed queue weight changes the decision").isGreaterThan(5);
    }

    private static int caught(BiFunction<Case, Long, Decision> broken) {
        int caught = 0;
        for (long seed = 1; seed <= 200; seed++) {
            Case c = of(seed);
            Decision reference = new ReferenceRoutingPolicy(c.config(), new Random(seed)).decide(c.request(), c.snapshot());
            if (difference(reference, broken.apply(c, seed)).isPresent()) {
                caught++;
            }
        }
        return caught;
    }
}
