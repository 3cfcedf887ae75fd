package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.KvTier;
import io.flotilla.worker.kvbm.LowerTiers;
import io.flotilla.worker.kvbm.Onboarding;
import io.flotilla.worker.kvbm.TierStats;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Brings a waiting sequence's prefix from the lower KV tiers into the device pool when that is cheaper
 * than recomputing it: the scheduler's side of tier onboarding, and the one place that decides it.
 *
 * <p>At admission the planner has matched the prefix resident on the device (blocks {@code [0, d)}).
 * {@link #plan} continues from block d over blocks held on the device or in a lower tier, prices each
 * lower-tier block at its modeled link time ({@link LowerTiers#onboardMs}) and keeps the cut k that
 * saves the most: {@code prefill_ms(N) − prefill_ms(N − k·bs) − Σ onboard_ms} with N the tokens left to
 * compute after the device prefix. {@link #start} gives each block to onboard a fresh device slot (the
 * copy holds its own reference on it, so a preemption never frees a slot being written); the planner
 * schedules the sequence's next chunk in the same step (which lasts at least the modeled transfer
 * time), and the scheduler completes that chunk only once the copies verified. {@link #complete}
 * registers the verified prefix and cuts the sequence back at the first block that failed.
 *
 * <p>Same contract as the scheduler: single-threaded, under the engine lock (completion arrives through
 * the tiers' owner, {@code SimulatedEngine}, which takes it).
 */
final class TierIntake {

    private final SimEngineConfig config;
    private final int blockSize;
    private final BlockPool pool;
    private final LowerTiers tiers;
    private final TierStats deviceStats;

    /** What {@link #plan} found: blocks {@code [from, from + tiers.length)}, each on the device or in a lower tier. */
    static final class Run {
        final int from;
        final KvTier[] tiers;
        final double onboardMs;
        int[] jobSlots;
        int[] lowerBlocks;
        Onboarding job;

        Run(int from, KvTier[] tiers, double onboardMs) {
            this.from = from;
            this.tiers = tiers;
            this.onboardMs = onboardMs;
        }

        int blocks() {
            return tiers.length;
        }

        /** Blocks to copy in (those not on the device). */
        int lower() {
            int n = 0;
            for (KvTier t : tiers) {
                n += t == KvTier.KV_TIER_DEVICE ? 0 : 1;
            }
            return n;
        }
    }

    TierIntake(SimEngineConfig config, BlockPool pool, LowerTiers tiers, TierStats deviceStats) {
        this.config = config;
        this.blockSize = config.blockSize();
        this.pool = pool;
        this.tiers = tiers;
        this.deviceStats = deviceStats;
    }

    /**
     * The run worth onboarding after the device prefix {@code [0, deviceBlocks)}, at most up to block
     * {@code maxBlocks}; null when none is (nothing in a lower tier, or recomputing is cheaper).
     */
    Run plan(Sequence seq, int deviceBlocks, int maxBlocks) {
        if (deviceBlocks >= maxBlocks) {
            return null;
        }
        KvTier[] found = new KvTier[maxBlocks - deviceBlocks];
        double[] cost = new double[found.length + 1];
        int n = 0;
        for (int b = deviceBlocks; b < maxBlocks; b++, n++) {
            long h = seq.seqHash(b);
            KvTier t = pool.lookup(h) >= 0 ? KvTier.KV_TIER_DEVICE : tiers.locate(h);
            if (t == KvTier.KV_TIER_UNSPECIFIED) {
                break;
            }
            found[n] = t;
            cost[n + 1] = cost[n] + (t == KvTier.KV_TIER_DEVICE ? 0 : tiers.onboardMs(t));
        }
        if (n == 0) {
            return null;
        }
        long left = seq.length - (long) deviceBlocks * blockSize;
        double full = config.timing().prefillMs(left) / config.speedup();
        int best = 0;
        double bestGain = 0;
        for (int k = 1; k <= n; k++) {
            double gain = full - config.timing().prefillMs(left - (long) k * blockSize) / config.speedup() - cost[k];
            if (gain > bestGain || (gain == bestGain && gain > 0)) {
                best = k;
                bestGain = gain;
            }
        }
        return best == 0 ? null : new Run(deviceBlocks, Arrays.copyOf(found, best), cost[best]);
    }

    /** A request reused {@code seqHash} from the device: its lower-tier copy stays valuable too. */
    void touchLower(long seqHash) {
        tiers.touch(seqHash);
    }

    /** Device-resident blocks inside {@code run} that are cached now (they stop being evictable). */
    int cachedInRun(Sequence seq, Run run) {
        int n = 0;
        for (int i = 0; i < run.blocks(); i++) {
            if (run.tiers[i] == KvTier.KV_TIER_DEVICE && pool.isCached(pool.lookup(seq.seqHash(run.from + i)))) {
                n++;
            }
        }
        return n;
    }

    /**
     * Takes the run's blocks for {@code seq} (whose device prefix is already held): device blocks are
     * retained, the others get fresh slots filled by the tiers. The sequence then awaits its KV.
     */
    void start(Sequence seq, Run run) {
        int lower = run.lower();
        long[] hashes = new long[lower];
        KvTier[] from = new KvTier[lower];
        ByteBuffer[] into = new ByteBuffer[lower];
        run.jobSlots = new int[lower];
        run.lowerBlocks = new int[lower];
        int[] slots = new int[run.blocks()];
        for (int i = 0; i < run.blocks(); i++) { // retain first: the allocations below must not evict these
            if (run.tiers[i] == KvTier.KV_TIER_DEVICE) {
                slots[i] = pool.lookup(seq.seqHash(run.from + i));
                pool.retain(slots[i]);
            }
        }
        int j = 0;
        for (int i = 0; i < run.blocks(); i++) {
            if (run.tiers[i] == KvTier.KV_TIER_DEVICE) {
                continue;
            }
            int b = run.from + i;
            int slot = pool.allocate();
            pool.retain(slot); // the copy's own reference
            slots[i] = slot;
            hashes[j] = seq.seqHash(b);
            from[j] = run.tiers[i];
            into[j] = pool.payloads().block(slot);
            run.jobSlots[j] = slot;
            run.lowerBlocks[j] = b;
            j++;
        }
        for (int slot : slots) {
            seq.addSlot(slot);
        }
        seq.onboarding = run;
        run.job = tiers.onboard(hashes, from, into, job -> complete(seq, run));
    }

    /**
     * The copies ended: register what verified, give back the copies' references. When a block failed,
     * the sequence is cut back to the block before it (its planned chunk, if not completed yet, no
     * longer matches and is skipped), and the rest is computed.
     */
    private void complete(Sequence seq, Run run) {
        Onboarding job = run.job;
        int good = job.verifiedPrefix();
        if (seq.onboarding == run) {
            seq.onboarding = null;
            int end = good < run.lowerBlocks.length ? run.lowerBlocks[good] : run.from + run.blocks();
            for (int j = 0; j < good; j++) {
                int b = run.lowerBlocks[j];
                int held = pool.registerImported(seq.slot(b), b == 0 ? 0 : seq.seqHash(b - 1),
                        seq.seqHash(b), seq.localHash(b));
                seq.replaceSlot(b, held);
            }
            if (end < run.from + run.blocks()) {
                seq.truncateBlocks(end, pool);
                seq.computed = end * blockSize;
            }
            if (seq.cachedTokens < 0) {
                seq.cachedTokens = end * blockSize;
                recordHits(run, end);
            }
        }
        for (int slot : run.jobSlots) {
            pool.release(slot);
        }
    }

    /** Per-tier hit tokens of a first admission: the device prefix, then the run up to {@code end}. */
    private void recordHits(Run run, int end) {
        long device = run.from;
        long host = 0;
        long disk = 0;
        for (int i = 0; i < end - run.from; i++) {
            switch (run.tiers[i]) {
                case KV_TIER_HOST -> host++;
                case KV_TIER_DISK -> disk++;
                default -> device++;
            }
        }
        deviceStats.addHitTokens(device * blockSize);
        tiers.stats(KvTier.KV_TIER_HOST).addHitTokens(host * blockSize);
        tiers.stats(KvTier.KV_TIER_DISK).addHitTokens(disk * blockSize);
    }
}
