package io.flotilla.router.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static io.flotilla.router.core.Fixtures.SIMPLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Each scorer against literal inputs. Timing is {@link Fixtures#SIMPLE}: prefill_ms(t) = 1e-4·t² +
 * 0.1·t + 10, decode_ms(u) = 20·u + 5 (divided by speedup); capacity 1000 blocks; block size 16.
 */
class ScorerTableTest {

    private static Candidate candidate(RoutingRequest r, int overlap, int waiting, long reportedPrefill,
                                       long bookedPrefill, int bookedPrompts, int reportedKv, long bookedKv,
                                       LoadMerge merge, double speedup) {
        WorkerTiming t = new WorkerTiming(SIMPLE.prefillA(), SIMPLE.prefillB(), SIMPLE.prefillC(), SIMPLE.decodeD2(),
                SIMPLE.decodeD1(), SIMPLE.decodeD0(), speedup);
        WorkerView w = Fixtures.withTiming(Fixtures.worker("w"), t, 1000)
                .withLoad(new LoadReport(0, waiting, reportedPrefill, reportedKv));
        return Candidate.of(r, w, overlap, new ActiveLoad(bookedPrefill, bookedPrompts, bookedKv, 1), ActiveLoad.NONE,
                merge);
    }

    @ParameterizedTest(name = "[{index}] isl={0} overlap={1} Q=merge({2},{3},{5}) n={4} credit={6} {7} speedup={8} -> {9}")
    @CsvSource({
            // isl, overlap, reportedQ, bookedQ, bookedPrompts, merge, credit, unit, speedup, expected
            "1024,   0,    0,   0, 0, MAX, true,  MILLISECONDS, 1, 217.2576", // 1e-4·1024² + 102.4 + 10
            "1024,  32,    0,   0, 0, MAX, true,  MILLISECONDS, 1, 87.4144",  // N = 1024 − 32·16 = 512
            "1024, 100,    0,   0, 0, MAX, true,  MILLISECONDS, 1, 0",        // H capped at isl: nothing new
            "1024,  32, 2000, 500, 1, MAX, true,  MILLISECONDS, 1, 697.4144", // queue_ms(2000, 1) = 610, + 87.4144
            "1024,  32, 2000, 500, 4, MAX, true,  MILLISECONDS, 1, 427.4144", // queue_ms(2000, 4) = 100 + 200 + 40
            "1024,  32, 2000, 500, 1, SUM, true,  MILLISECONDS, 1, 972.4144", // queue_ms(2500, 1) = 885, + 87.4144
            "1024,  32,    0, 300, 0, MAX, true,  MILLISECONDS, 1, 136.4144", // n ≥ 1 when tokens queue: 9 + 30 + 10
            "1024,  32,    0,   0, 0, MAX, false, MILLISECONDS, 1, 217.2576", // no cache credit: N = isl
            "1024,  32,    0,   0, 0, MAX, true,  MILLISECONDS, 2, 43.7072",  // speedup halves it
            "1024,  32, 2000, 500, 1, MAX, true,  BLOCKS,       1, 157",      // (2000 + 512) / 16
            "1024,  32,    0, 800, 1, MAX, false, BLOCKS,       1, 114",      // (800 + 1024) / 16
            "   0,   0,    0,   0, 0, MAX, true,  MILLISECONDS, 1, 0",        // empty prompt, empty queue
    })
    void prefill(int isl, int overlap, long reportedQ, long bookedQ, int bookedPrompts, LoadMerge merge,
                 boolean credit, CostUnit unit, double speedup, double expected) {
        RoutingRequest r = Fixtures.request("r", isl, Fixtures.chain(1, isl / 16));
        Candidate c = candidate(r, overlap, 0, reportedQ, bookedQ, bookedPrompts, 0, 0, merge, speedup);
        Scorer s = credit ? PrefillScorer.withCacheCredit() : PrefillScorer.withCacheCredit().withoutCacheCredit();
        assertThat(s.cost(new Scorer.ScoringContext(r, unit), c)).isCloseTo(expected, within(1e-9));
    }

    @ParameterizedTest(name = "[{index}] isl={0} osl={1} kv=merge({2},{3},{4}) {5} -> {6}")
    @CsvSource({
            // isl, osl, reportedKv, bookedKv, merge, unit, expected
            "1024, 576, 400,   0, MAX, MILLISECONDS, 15",  // u = (400 + ⌈1600/16⌉) / 1000 = 0.5 → 20·0.5 + 5
            "1024, 576, 990,   0, MAX, MILLISECONDS, 25",  // u clamps at 1
            "   0,   0,   0,   0, MAX, MILLISECONDS, 5",   // idle: d0
            "1024,   0, 400, 300, MAX, BLOCKS,       400",
            "1024,   0, 400, 300, SUM, BLOCKS,       700",
            "1024,   0, 100, 300, MAX, BLOCKS,       300",  // bookings not yet in the report
    })
    void decode(int isl, int osl, int reportedKv, long bookedKv, LoadMerge merge, CostUnit unit, double expected) {
        RoutingRequest r = new RoutingRequest("r", Fixtures.MODEL, isl, 16, new long[0], java.util.Set.of(), false, osl);
        Candidate c = candidate(r, 0, 0, 0, 0, 0, reportedKv, bookedKv, merge, 1);
        assertThat(new DecodeLoadScorer().cost(new Scorer.ScoringContext(r, unit), c)).isCloseTo(expected, within(1e-9));
    }

    @ParameterizedTest(name = "[{index}] waiting={0} kv={1} {2} -> {3}")
    @CsvSource({
            // waiting, reportedKv, unit, expected
            "3, 400, MILLISECONDS, 39",   // 3 · (20·0.4 + 5)
            "0, 400, MILLISECONDS, 0",
            "1,   0, MILLISECONDS, 5",
            "3, 400, BLOCKS,       3",
    })
    void queue(int waiting, int reportedKv, CostUnit unit, double expected) {
        RoutingRequest r = Fixtures.request("r", 1024);
        Candidate c = candidate(r, 0, waiting, 0, 0, 0, reportedKv, 0, LoadMerge.MAX, 1);
        assertThat(new QueueWaitScorer().cost(new Scorer.ScoringContext(r, unit), c)).isCloseTo(expected, within(1e-9));
    }

    @ParameterizedTest(name = "[{index}] weights=({0},{1},{2}) -> {3}")
    @CsvSource({
            // w_prefill, w_decode, w_queue, expected. Terms: prefill queue_ms(3000, 3) + prefill(512) =
            // (300 + 300 + 30) + 87.4144 = 717.4144; decode: n = 100 − 32 cached blocks = 68, u = 0.468 →
            // 14.36; queue: 3 · (20·0.4 + 5) = 39
            "1,   1, 1,   770.7744",
            "2,   1, 0.5, 1468.6888",
            "0,   1, 1,   53.36",
            "1,   0, 0,   717.4144",
    })
    void weightsLiveInTheCostModel(double wp, double wd, double wq, double expected) {
        RoutingRequest r = new RoutingRequest("r", Fixtures.MODEL, 1024, 16, new long[0], java.util.Set.of(), false, 576);
        Candidate c = candidate(r, 32, 3, 3000, 500, 1, 400, 0, LoadMerge.MAX, 1);
        CostModel m = PluginRegistry.standard().assemble(PolicySpec.standard(new RouterConfig.Weights(wp, wd, wq)), true)
                .full(true);
        double[] costs = m.costs(r, CostUnit.MILLISECONDS, List.of(c));
        assertThat(costs[0]).isCloseTo(expected, within(1e-9));
    }
}
