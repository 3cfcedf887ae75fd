package io.flotilla.indexer.core;

import io.flotilla.protocol.v1.KvTier;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which workers hold which KV blocks, by {@code seq_hash} and tier (device, host memory, disk): for a
 * chain of seq hashes, how many leading blocks each worker holds on the device, and how many it
 * holds in any tier with how many of those are best held in each.
 *
 * <p>Structure: workers are interned to dense slots ({@link WorkerSlots}); for each tier and each
 * group of 64 slots one {@link BlockTable} maps seq_hash to a 64-bit mask of the slots holding the
 * block in that tier. A worker holding a block in several tiers has its bit in each table; the best
 * tier is the first one whose mask has it. A query walks the chain once per group, AND-ing masks, and
 * stops as soon as no worker of the group is still matching; tables of a group's lower tiers that are
 * empty are skipped, so a cluster without lower tiers pays one probe a block as before. Per slot and
 * tier the index keeps the count and XOR of the worker's seq hashes, so the load-report digest check
 * is O(1).
 *
 * <p>Threading: one writer thread calls every mutating method; {@link #findMatches} and the other
 * read methods may run on any thread at the same time, without locks. Guarantees for a reader:
 * <ul>
 *   <li>each (block, tier) mask is read whole, before or after any one update (never torn);</li>
 *   <li>a reported worker held each of its reported blocks in the reported tier at some instant during
 *       the query (the instants may differ per block and tier): a stale read can give a worse route,
 *       not a block the worker never held under this assignment;</li>
 *   <li>once {@link #dropWorker} has returned, no query that starts afterwards reports that worker,
 *       and a query running across the drop (or across the slot's reuse by another worker) omits
 *       it rather than attribute another worker's blocks to it.</li>
 * </ul>
 * Seq hashes are unsigned 64-bit values carried in a {@code long}; every value, 0 included, is a
 * valid key. A block is held in a tier from its Stored to its Removed of that tier. Behind a
 * {@link KvEventApplier}, mutate only through the applier (it owns the worker slots).
 */
public class PrefixIndex {

    private static final VarHandle SLOT_LONG = MethodHandles.arrayElementVarHandle(long[].class);

    private final WorkerSlots slots = new WorkerSlots();
    private final int initialGroupCapacity;
    /** tables[tier][group]; the arrays are replaced (never mutated in place) when a group is added. */
    private volatile BlockTable[][] tables = {new BlockTable[0], new BlockTable[0], new BlockTable[0]};
    // Per tier and slot, written by the writer with release stores, read by anyone with opaque loads.
    private volatile long[][] counts = {new long[64], new long[64], new long[64]};
    private volatile long[][] xors = {new long[64], new long[64], new long[64]};

    /** An index sized for a small cluster; tables grow as needed. */
    public PrefixIndex() {
        this(1024);
    }

    /** @param expectedBlocks distinct device blocks expected in the first 64-worker group (a sizing hint) */
    public PrefixIndex(int expectedBlocks) {
        this.initialGroupCapacity = Math.max(16, expectedBlocks);
    }

    // ------------------------------------------------------------------ read side (any thread)

    /**
     * For the chain {@code seqHashes} (prefix order), each worker holding its first block in some tier:
     * its leading blocks on the device and its leading blocks in any tier, counted by best tier.
     * Workers with no leading block in any tier are left out. Order: by slot.
     */
    public List<WorkerMatch> findMatches(long[] seqHashes) {
        WorkerSlots.View before = slots.view();
        BlockTable[][] t = tables;
        int n = seqHashes.length;
        List<long[]> found = null; // {slot, device run, any run, host, disk}
        int groupCount = Math.min(before.groups(), t[Tiers.DEVICE].length);
        int[] host = null;
        int[] disk = null;
        int[] devRun = null;
        for (int g = 0; g < groupCount && n > 0; g++) {
            long occupied = before.occupancy()[g];
            if (occupied == 0) {
                continue;
            }
            BlockTable dev = t[Tiers.DEVICE][g];
            BlockTable hostTable = t[Tiers.HOST][g];
            BlockTable diskTable = t[Tiers.DISK][g];
            boolean hasHost = !hostTable.emptyForReaders();
            boolean hasDisk = !diskTable.emptyForReaders();
            long[] devCells = dev.cellsForRead();
            long[] hostCells = hasHost ? hostTable.cellsForRead() : null;
            long[] diskCells = hasDisk ? diskTable.cellsForRead() : null;
            long active = occupied;
            long activeDev = occupied;
            if (hasHost || hasDisk) {
                host = host == null ? new int[64] : clear(host);
                disk = disk == null ? new int[64] : clear(disk);
                devRun = devRun == null ? new int[64] : devRun;
            }
            int i = 0;
            for (; i < n && active != 0; i++) {
                long h = seqHashes[i];
                long d = h == 0 ? dev.zeroMask() : BlockTable.lookup(devCells, h);
                if (!hasHost && !hasDisk) {
                    long lost = active & ~d;
                    if (lost != 0) {
                        if (i > 0) {
                            found = record(found, g, lost, i, i, null, null);
                        }
                        active &= d;
                    }
                    continue;
                }
                long hb = !hasHost ? 0 : h == 0 ? hostTable.zeroMask() : BlockTable.lookup(hostCells, h);
                long kb = !hasDisk ? 0 : h == 0 ? diskTable.zeroMask() : BlockTable.lookup(diskCells, h);
                long lostDev = activeDev & ~d;
                for (long m = lostDev; m != 0; m &= m - 1) {
                    devRun[Long.numberOfTrailingZeros(m)] = i;
                }
                activeDev &= d;
                long any = d | hb | kb;
                long lost = active & ~any;
                if (lost != 0) {
                    if (i > 0) {
                        found = record(found, g, lost, -1, i, host, disk, devRun, activeDev);
                    }
                    active &= any;
                }
                for (long m = active & hb & ~d; m != 0; m &= m - 1) {
                    host[Long.numberOfTrailingZeros(m)]++;
                }
                for (long m = active & kb & ~d & ~hb; m != 0; m &= m - 1) {
                    disk[Long.numberOfTrailingZeros(m)]++;
                }
            }
            if (active != 0) {
                found = (hasHost || hasDisk) ? record(found, g, active, -1, n, host, disk, devRun, activeDev)
                        : record(found, g, active, n, n, null, null);
            }
        }
        if (found == null) {
            return List.of();
        }
        WorkerSlots.View after = slots.view();
        List<WorkerMatch> out = new ArrayList<>(found.size());
        for (long[] f : found) {
            int slot = (int) f[0];
            if (after == before || before.sameAssignment(slot, after)) {
                int any = (int) f[2];
                int h = (int) f[3];
                int k = (int) f[4];
                out.add(new WorkerMatch(before.names()[slot], (int) f[1], any - h - k, h, k));
            }
        }
        return out;
    }

    private static int[] clear(int[] a) {
        Arrays.fill(a, 0);
        return a;
    }

    /** Device-only group: every recorded worker's device run equals its any-tier run. */
    private static List<long[]> record(List<long[]> found, int group, long slotsMask, int devRun, int anyRun,
                                       int[] host, int[] disk) {
        List<long[]> out = found == null ? new ArrayList<>() : found;
        for (long m = slotsMask; m != 0; m &= m - 1) {
            int bit = Long.numberOfTrailingZeros(m);
            out.add(new long[] {((long) group << 6) | bit, devRun, anyRun, 0, 0});
        }
        return out;
    }

    /** Group with lower tiers: workers still on the device through {@code anyRun} have that device run. */
    private static List<long[]> record(List<long[]> found, int group, long slotsMask, int ignored, int anyRun,
                                       int[] host, int[] disk, int[] devRun, long activeDev) {
        List<long[]> out = found == null ? new ArrayList<>() : found;
        for (long m = slotsMask; m != 0; m &= m - 1) {
            int bit = Long.numberOfTrailingZeros(m);
            int dev = (activeDev & (1L << bit)) != 0 ? anyRun : devRun[bit];
            out.add(new long[] {((long) group << 6) | bit, dev, anyRun, host[bit], disk[bit]});
        }
        return out;
    }

    /** Device blocks held by {@code workerId} (0 when unknown). */
    public long blockCount(String workerId) {
        return blockCount(workerId, Tiers.DEVICE);
    }

    /** Blocks {@code workerId} holds in {@code tier} (0 when unknown). */
    long blockCount(String workerId, int tier) {
        int slot = readerSlot(workerId);
        return slot < 0 ? 0 : slotValue(counts[tier], slot);
    }

    /** XOR of the device seq hashes held by {@code workerId} (0 when unknown); with the count, its digest. */
    public long xorDigest(String workerId) {
        return xorDigest(workerId, Tiers.DEVICE);
    }

    long xorDigest(String workerId, int tier) {
        int slot = readerSlot(workerId);
        return slot < 0 ? 0 : slotValue(xors[tier], slot);
    }

    /** Resident (block, worker) pairs on the device. */
    public long residentPairs() {
        return residentPairs(Tiers.DEVICE);
    }

    /** Resident (block, worker) pairs in {@code tier}. */
    public long residentPairs(KvTier tier) {
        return residentPairs(Tiers.of(tier));
    }

    private long residentPairs(int tier) {
        WorkerSlots.View v = slots.view();
        long total = 0;
        for (int s = 0; s < v.names().length; s++) {
            if (v.names()[s] != null) {
                total += slotValue(counts[tier], s);
            }
        }
        return total;
    }

    /** Workers that have a slot (they may hold no block). */
    public List<String> workers() {
        List<String> out = new ArrayList<>();
        for (String name : slots.view().names()) {
            if (name != null) {
                out.add(name);
            }
        }
        return out;
    }

    /** The device seq hashes {@code workerId} holds, in table order (a full scan: tests, tools, snapshots). */
    public long[] blocksOf(String workerId) {
        return blocksOf(workerId, Tiers.DEVICE);
    }

    /** The seq hashes {@code workerId} holds in {@code tier}. */
    public long[] blocksOf(String workerId, int tier) {
        WorkerSlots.View v = slots.view();
        int slot = indexOf(v.names(), workerId);
        BlockTable[] groups = tables[tier];
        if (slot < 0 || (slot >>> 6) >= groups.length) {
            return new long[0];
        }
        long bit = 1L << (slot & 63);
        LongList out = new LongList(16);
        groups[slot >>> 6].forEach((h, mask) -> {
            if ((mask & bit) != 0) {
                out.add(h);
            }
        });
        return out.toArray();
    }

    /** Every worker's device seq hashes in one scan per group (writer thread; used for index snapshots). */
    public Map<String, long[]> exportBlocks() {
        return exportBlocks(Tiers.DEVICE);
    }

    /** Every worker's seq hashes in {@code tier}, one scan per group (writer thread). */
    public Map<String, long[]> exportBlocks(int tier) {
        WorkerSlots.View v = slots.view();
        LongList[] perSlot = new LongList[v.names().length];
        for (int s = 0; s < perSlot.length; s++) {
            if (v.names()[s] != null) {
                perSlot[s] = new LongList((int) Math.min(Integer.MAX_VALUE - 8, slotValue(counts[tier], s)));
            }
        }
        BlockTable[] groups = tables[tier];
        for (int g = 0; g < groups.length; g++) {
            int base = g << 6;
            groups[g].forEach((h, mask) -> {
                for (long m = mask; m != 0; m &= m - 1) {
                    LongList list = perSlot[base + Long.numberOfTrailingZeros(m)];
                    if (list != null) {
                        list.add(h);
                    }
                }
            });
        }
        Map<String, long[]> out = new HashMap<>();
        for (int s = 0; s < perSlot.length; s++) {
            if (perSlot[s] != null) {
                out.put(v.names()[s], perSlot[s].toArray());
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ write side (one thread)

    /** Records that {@code workerId} holds {@code seqHash} on the device; true when it was not held before. */
    public boolean store(String workerId, long seqHash) {
        return storeAt(acquireSlot(workerId), Tiers.DEVICE, seqHash);
    }

    /** Records that {@code workerId} holds {@code seqHash} in {@code tier}; true when it was not held there before. */
    public boolean store(String workerId, int tier, long seqHash) {
        return storeAt(acquireSlot(workerId), tier, seqHash);
    }

    /** Records that {@code workerId} dropped {@code seqHash} from the device; true when it was held. */
    public boolean remove(String workerId, long seqHash) {
        int slot = slots.slotOf(workerId);
        return slot >= 0 && removeAt(slot, Tiers.DEVICE, seqHash);
    }

    /** Drops every block of {@code workerId} in every tier; the worker keeps its slot. */
    public void clear(String workerId) {
        int slot = slots.slotOf(workerId);
        if (slot >= 0) {
            clearAt(slot);
        }
    }

    /** Drops every block of {@code workerId} and the worker itself. */
    public void dropWorker(String workerId) {
        dropSlots(slots.slotOf(workerId));
    }

    /** Makes {@code seqHashes} exactly the device set {@code workerId} holds (blocks kept stay visible). */
    public void replace(String workerId, long[] seqHashes) {
        replaceAt(acquireSlot(workerId), Tiers.DEVICE, seqHashes);
    }

    // Slot-level operations for the applier (same package). Overridable only so that tests can
    // build a deliberately broken index; production code never subclasses this class.

    int slotOf(String workerId) {
        return slots.slotOf(workerId);
    }

    int acquireSlot(String workerId) {
        int slot = slots.acquire(workerId);
        int g = slot >>> 6;
        BlockTable[][] t = tables;
        if (g >= t[Tiers.DEVICE].length) {
            BlockTable[][] grown = new BlockTable[Tiers.COUNT][];
            long[][] c = new long[Tiers.COUNT][];
            long[][] x = new long[Tiers.COUNT][];
            for (int tier = 0; tier < Tiers.COUNT; tier++) {
                grown[tier] = Arrays.copyOf(t[tier], g + 1);
                for (int i = t[tier].length; i < grown[tier].length; i++) {
                    grown[tier][i] = new BlockTable(i == 0 && tier == Tiers.DEVICE ? initialGroupCapacity : 16);
                }
                c[tier] = Arrays.copyOf(counts[tier], (g + 1) << 6);
                x[tier] = Arrays.copyOf(xors[tier], (g + 1) << 6);
            }
            counts = c;
            xors = x;
            tables = grown;
        }
        return slot;
    }

    boolean storeAt(int slot, int tier, long seqHash) {
        long bit = 1L << (slot & 63);
        long before = tables[tier][slot >>> 6].or(seqHash, bit);
        if ((before & bit) != 0) {
            return false;
        }
        adjust(slot, tier, 1, seqHash);
        return true;
    }

    boolean removeAt(int slot, int tier, long seqHash) {
        long bit = 1L << (slot & 63);
        long before = tables[tier][slot >>> 6].andNot(seqHash, bit);
        if ((before & bit) == 0) {
            return false;
        }
        adjust(slot, tier, -1, seqHash);
        return true;
    }

    /** Drops {@code slot}'s blocks in every tier. */
    void clearAt(int slot) {
        for (int tier = 0; tier < Tiers.COUNT; tier++) {
            clearAt(slot, tier);
        }
    }

    void clearAt(int slot, int tier) {
        long keep = ~(1L << (slot & 63));
        tables[tier][slot >>> 6].rewriteAll((h, mask) -> mask & keep);
        resetDigest(slot, tier);
    }

    /** Releases the slots first (readers start omitting them), then clears their bits in every tier. */
    void dropSlots(int... dropped) {
        slots.release(dropped);
        BlockTable[][] t = tables;
        long[] perGroup = new long[t[Tiers.DEVICE].length];
        for (int slot : dropped) {
            if (slot >= 0) {
                perGroup[slot >>> 6] |= 1L << (slot & 63);
                for (int tier = 0; tier < Tiers.COUNT; tier++) {
                    resetDigest(slot, tier);
                }
            }
        }
        for (int g = 0; g < perGroup.length; g++) {
            long keep = ~perGroup[g];
            if (perGroup[g] != 0) {
                for (int tier = 0; tier < Tiers.COUNT; tier++) {
                    t[tier][g].rewriteAll((h, mask) -> mask & keep);
                }
            }
        }
    }

    void replaceAt(int slot, int tier, long[] seqHashes) {
        BlockTable wanted = new BlockTable(seqHashes.length);
        for (long h : seqHashes) {
            wanted.or(h, 1);
            storeAt(slot, tier, h);
        }
        long bit = 1L << (slot & 63);
        tables[tier][slot >>> 6].rewriteAll((h, mask) -> {
            if ((mask & bit) != 0 && wanted.get(h) == 0) {
                adjust(slot, tier, -1, h);
                return mask & ~bit;
            }
            return mask;
        });
    }

    long countAt(int slot) {
        return countAt(slot, Tiers.DEVICE);
    }

    long countAt(int slot, int tier) {
        return slotValue(counts[tier], slot);
    }

    long xorAt(int slot, int tier) {
        return slotValue(xors[tier], slot);
    }

    /** Pre-sizes the table of {@code slot}'s group in {@code tier} for {@code moreBlocks} additional blocks. */
    void reserve(int slot, int tier, int moreBlocks) {
        tables[tier][slot >>> 6].ensureCapacity(moreBlocks);
    }

    private void adjust(int slot, int tier, int delta, long seqHash) {
        long[] c = counts[tier];
        long[] x = xors[tier];
        SLOT_LONG.setRelease(c, slot, c[slot] + delta);
        SLOT_LONG.setRelease(x, slot, x[slot] ^ seqHash);
    }

    private void resetDigest(int slot, int tier) {
        SLOT_LONG.setRelease(counts[tier], slot, 0L);
        SLOT_LONG.setRelease(xors[tier], slot, 0L);
    }

    private int readerSlot(String workerId) {
        return indexOf(slots.view().names(), workerId);
    }

    private static long slotValue(long[] values, int slot) {
        return slot < values.length ? (long) SLOT_LONG.getOpaque(values, slot) : 0;
    }

    private static int indexOf(String[] names, String workerId) {
        for (int s = 0; s < names.length; s++) {
            if (workerId.equals(names[s])) {
                return s;
            }
        }
        return -1;
    }
}
