package io.flotilla.worker.kvbm;

import io.flotilla.protocol.v1.KvTier;

import java.nio.ByteBuffer;

/**
 * One request's blocks being brought from lower tiers into device slots, in prefix order. Created by
 * {@link LowerTiers#onboard}; the tier thread fills {@link #verified}; the completion callback reads
 * it as the tiers' owner.
 */
public final class Onboarding {

    final long[] seqHashes;
    final KvTier[] tiers;
    final int[] slots;
    final int[] checksums;
    final ByteBuffer[] into;
    final boolean[] verified;
    final long startedNanos = System.nanoTime();

    Onboarding(long[] seqHashes, KvTier[] tiers, int[] slots, int[] checksums, ByteBuffer[] into) {
        this.seqHashes = seqHashes;
        this.tiers = tiers;
        this.slots = slots;
        this.checksums = checksums;
        this.into = into;
        this.verified = new boolean[seqHashes.length];
    }

    public int blocks() {
        return seqHashes.length;
    }

    /** Leading blocks whose bytes arrived and verified; the rest must be recomputed. */
    public int verifiedPrefix() {
        int n = 0;
        while (n < verified.length && verified[n]) {
            n++;
        }
        return n;
    }

    public KvTier tierOf(int block) {
        return tiers[block];
    }
}
