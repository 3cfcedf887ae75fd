package io.flotilla.indexer.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A check that cannot fail proves nothing: the same simulation harness, run against deliberately
 * broken indexes, must report a mismatch.
 */
class DifferentialHarnessSelfTest {

    /** Ignores every removal (and so never lowers a worker's count). */
    static final class ForgetsRemovals extends PrefixIndex {
        @Override
        boolean removeAt(int slot, int tier, long seqHash) {
            return false;
        }
    }

    /** Keeps one set per worker, whatever the tier: a block offloaded to host memory looks like the device's. */
    static final class IgnoresTiers extends PrefixIndex {
        @Override
        boolean storeAt(int slot, int tier, long seqHash) {
            return super.storeAt(slot, 0, seqHash);
        }

        @Override
        boolean removeAt(int slot, int tier, long seqHash) {
            return super.removeAt(slot, 0, seqHash);
        }
    }

    /** A removal from a lower tier also drops the device copy (one "best tier" and no more). */
    static final class RemovesEveryTier extends PrefixIndex {
        @Override
        boolean removeAt(int slot, int tier, long seqHash) {
            boolean any = false;
            for (int t = 0; t < 3; t++) {
                any |= super.removeAt(slot, t, seqHash);
            }
            return any;
        }
    }

    /** Never drops a worker's blocks (lease expiry, STOPPED and epoch changes leave them behind). */
    static final class KeepsDroppedBlocks extends PrefixIndex {
        @Override
        void dropSlots(int... dropped) {
        }
    }

    /** Ignores Cleared events. */
    static final class IgnoresClears extends PrefixIndex {
        @Override
        void clearAt(int slot, int tier) {
        }
    }

    static Stream<Arguments> brokenIndexes() {
        return Stream.of(
                Arguments.of("ignores removals", (Supplier<PrefixIndex>) ForgetsRemovals::new),
                Arguments.of("keeps dropped blocks", (Supplier<PrefixIndex>) KeepsDroppedBlocks::new),
                Arguments.of("ignores clears", (Supplier<PrefixIndex>) IgnoresClears::new),
                Arguments.of("ignores tiers", (Supplier<PrefixIndex>) IgnoresTiers::new),
                Arguments.of("removes every tier", (Supplier<PrefixIndex>) RemovesEveryTier::new));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("brokenIndexes")
    void harnessCatchesABrokenIndex(String name, Supplier<PrefixIndex> broken) {
        SplittableRandom rnd = new SplittableRandom(99);
        int caught = 0;
        int runs = 50;
        for (int run = 0; run < runs; run++) {
            List<IndexSimulation.Action> actions = randomScript(rnd);
            try {
                new IndexSimulation(broken.get(), IndexDifferentialPropertyTest.TIGHT, false).run(actions);
            } catch (AssertionError expected) {
                caught++;
            }
            // the same script passes against the real index: the mismatch is the fault's, not the harness's
            new IndexSimulation(new PrefixIndex(8), IndexDifferentialPropertyTest.TIGHT, false).run(actions);
        }
        assertThat(caught).as("runs out of %d where the broken index was caught", runs).isGreaterThan(runs / 2);
    }

    static List<IndexSimulation.Action> randomScript(SplittableRandom rnd) {
        List<IndexSimulation.Action> out = new ArrayList<>();
        for (int i = 0; i < 250; i++) {
            out.add(new IndexSimulation.Action(rnd.nextInt(100), rnd.nextInt(IndexSimulation.WORKERS),
                    rnd.nextInt(1000), rnd.nextInt(1000)));
        }
        return out;
    }
}
