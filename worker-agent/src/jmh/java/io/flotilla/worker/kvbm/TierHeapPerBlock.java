package io.flotilla.worker.kvbm;

import io.flotilla.protocol.v1.KvTier;

import java.lang.management.ManagementFactory;
import java.util.SplittableRandom;

/**
 * Bytes of heap per block held in a lower tier, measured (not a JMH benchmark: JMH times code, it does
 * not weigh objects): full GC, used heap, build a tier's bookkeeping ({@link TierSlots}: seq hashes,
 * checksums, index, eviction order, pins, free stack) for 1 M slots and fill every slot, full GC, used
 * heap again; the difference over the slot count. The bytes themselves are off-heap (host) or in files
 * (disk) and not counted. Run with the serial collector so {@code System.gc()} is a full collection:
 * {@code java -Xms1g -Xmx1g -XX:+UseSerialGC -cp ... io.flotilla.worker.kvbm.TierHeapPerBlock}.
 */
public final class TierHeapPerBlock {

    public static void main(String[] args) {
        int slots = args.length > 0 ? Integer.parseInt(args[0]) : 1 << 20;
        for (int n : new int[] {slots, (slots * 3) / 4 + 1}) {
            long before = usedAfterGc();
            TierSlots t = new TierSlots(KvTier.KV_TIER_HOST, n);
            SplittableRandom rnd = new SplittableRandom(7);
            TierSlots.Victim[] victim = new TierSlots.Victim[1];
            for (int i = 0; i < n; i++) {
                int slot = t.reserve(victim);
                t.commit(slot, rnd.nextLong(), i);
            }
            long after = usedAfterGc();
            System.out.printf("%,d slots, all held: %.1f bytes of heap per block (estimate %.1f)%n", n,
                    (double) (after - before) / n, (double) t.heapBytes() / n);
            if (t.used() != n) {
                throw new AssertionError("not full");
            }
        }
    }

    private static long usedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
