package io.flotilla.bench.stats;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class LruHitRateTest {

    private static int[] prompt(int salt, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = salt * 1000 + i;
        }
        return t;
    }

    @Test
    void aCacheTooSmallForTheReuseDistanceMissesWhereALargerOneHits() {
        LruHitRate small = new LruHitRate(4, 2);
        LruHitRate large = new LruHitRate(4, 4);
        for (LruHitRate lru : new LruHitRate[] {small, large}) {
            lru.observe(prompt(1, 9)); // blocks a0 a1
            lru.observe(prompt(2, 9)); // blocks b0 b1: the small cache evicts a0 a1
        }
        assertThat(small.observe(prompt(1, 9))).isZero();
        assertThat(large.observe(prompt(1, 9))).isEqualTo(8);
    }

    @Test
    void theRootOutlivesItsTails() {
        LruHitRate lru = new LruHitRate(4, 3);
        lru.observe(prompt(1, 13)); // a0 a1 a2, touched a2, a1, a0: a0 is the most recent
        lru.observe(prompt(2, 5));  // b0 evicts a2
        assertThat(lru.observe(prompt(1, 13))).as("a0 and a1 are still there").isEqualTo(8);
    }

    @Test
    void withRoomForEverythingItIsTheUnlimitedOracle() {
        SplittableRandom rnd = new SplittableRandom(5);
        OracleHitRate oracle = new OracleHitRate(16);
        LruHitRate lru = new LruHitRate(16, 1 << 20);
        for (int i = 0; i < 200; i++) {
            int[] p = prompt(rnd.nextInt(20), 16 + rnd.nextInt(200));
            assertThat(lru.observe(p)).isEqualTo(oracle.observe(p));
        }
        assertThat(lru.hitRate()).isEqualTo(oracle.hitRate());
    }
}
