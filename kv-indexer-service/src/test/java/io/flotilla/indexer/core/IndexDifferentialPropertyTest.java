package io.flotilla.indexer.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.statistics.Statistics;

import java.util.List;

/**
 * The applier + index against {@link ReferenceIndexer} under seeded random interleavings (see
 * {@link IndexSimulation} for the actions and the checks made after each one).
 */
class IndexDifferentialPropertyTest {

    /** Small limits so that buffer overflow, epoch forgetting and record purging all happen. */
    static final ApplierSettings TIGHT = new ApplierSettings(1_500, 2, 2_000, 5_000, 2);
    /** Roomy limits for the lease invariant: nothing is forgotten. */
    static final ApplierSettings ROOMY = new ApplierSettings(1_000, 64, 2_000, Long.MAX_VALUE / 4, 64);

    @Property(seed = "20250611", tries = 400, edgeCases = EdgeCasesMode.NONE)
    void agreesWithTheReferenceModel(@ForAll("scripts") List<IndexSimulation.Action> actions) {
        IndexSimulation sim = new IndexSimulation(new PrefixIndex(8), TIGHT, false);
        sim.run(actions);
        ApplierStats s = sim.stats();
        // The scripts must exercise every rule, or agreement would prove little.
        covered("duplicate", s.duplicates() > 0, 30);
        covered("gap", s.gaps() > 0, 30);
        covered("snapshot applied", s.reconciliationsApplied() > 0, 20);
        covered("stale batch", s.staleBatches() > 0, 20);
        covered("stale status", s.staleStatuses() > 0, 5);
        covered("epoch change", s.epochChanges() > 0, 30);
        covered("lease expiry", s.leaseExpiries() > 0, 30);
        covered("stopped", s.stopped() > 0, 20);
        covered("drift", s.driftDetected() > 0, 5);
        covered("buffer overflow", s.bufferOverflows() > 0, 1);
    }

    @Property(seed = "4242", tries = 300, edgeCases = EdgeCasesMode.NONE)
    void neverReportsABlockAfterTheLeaseExpired(@ForAll("scripts") List<IndexSimulation.Action> actions) {
        IndexSimulation sim = new IndexSimulation(new PrefixIndex(8), ROOMY, true);
        sim.run(actions);
        covered("an expired lease was checked", sim.expiredLeaseChecks() > 0, 30);
    }

    private static Arbitrary<Integer> uniform(int min, int max) {
        return Arbitraries.integers().between(min, max).withDistribution(RandomDistribution.uniform());
    }

    private static void covered(String feature, boolean seen, double minPercent) {
        Statistics.label(feature).collect(seen);
        Statistics.label(feature).coverage(c -> c.check(true).percentage(p -> p >= minPercent));
    }

    @Provide
    Arbitrary<List<IndexSimulation.Action>> scripts() {
        return Combinators.combine(uniform(0, 99), uniform(0, IndexSimulation.WORKERS - 1), uniform(0, 999), uniform(0, 999))
                .as(IndexSimulation.Action::new)
                .list().ofMinSize(50).ofMaxSize(300);
    }
}
