package io.flotilla.indexer.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which workers hold which KV blocks, by {@code seq_hash}: for a chain of seq hashes, how many
 * leading blocks each worker holds.
 *
 * <p>Structure: workers are interned to dense slots ({@link WorkerSlots}); each group of 64 slots
 * has one {@link BlockTable} mapping seq_hash to a 64-bit mask of the slots holding the block. A
 * query walks the chain once per group, AND-ing masks, and stops as soon as no worker of the group
 * is still matching. Per slot the index keeps the count and XOR of the worker's seq hashes, so the
 * load-report digest check is O(1).
 *
 * <p>Threading: one writer thread calls every mutating method; {@link #findMatches} and the other
 * read methods may run on any thread at the same time, without locks. Guarantees for a reader:
 * <ul>
 *   <li>each block's mask is read whole, before or after any one update (never torn);</li>
 *   <li>a reported worker held each of its reported blocks at some instant during the query (the
 *       instants may differ per block): a stale read can give a worse route, not a block the worker
 *       never held under this assignment;</li>
 *   <li>once {@link #dropWorker} has returned, no query that starts afterwards reports that worker,
 *       and a query running across the drop (or across the slot's reuse by another worker) omits
 *       it rather than attribute another worker's blocks to it.</li>
 * </ul>
 * Seq hashes are unsigned 64-bit values carried in a {@code long}; every value, 0 included, is a
 * valid key. Tier is not tracked: a block is held from its Stored to its Removed. Behind a
 * {@link KvEventApplier}, mutate only through the applier (it owns the worker slots).
 */
public class PrefixIndex {

    private static final VarHandle SLOT_LONG = MethodHandles.arrayElementVarHandle(long[].class);

    private final WorkerSlots slots = new WorkerSlots();
    private final int initialGroupCapacity;
    private volatile BlockTable[] groups = new BlockTable[0];
    // Per slot, written by the writer with release stores, read by anyone with opaque loads.
    private volatile long[] counts = new long[64];
    private volatile long[] xors = new long[64];

    /** An index sized for a small cluster; tables grow as needed. */
    public PrefixIndex() {
        this(1024);
    }

    /** @param expectedBlocks distinct blocks expected in the first 64-worker group (a sizing hint) */
    public PrefixIndex(int expectedBlocks) {
        this.initialGroupCapacity = Math.max(16, expectedBlocks);
    }

    // ------------------------------------------------------------------ read side (any thread)

    /**
     * For the chain {@code seqHashes} (prefix order), the number of leading blocks each worker holds;
     * workers with no leading block are left out. Order: by slot.
     */
    public List<WorkerMatch> findMatches(long[] seqHashes) {
        WorkerSlots.View before = slots.view();
        BlockTable[] tables = groups;
        int n = seqHashes.length;
        long[] found = null; // (slot << 32) | matched
        int size = 0;
        int groupCount = Math.min(before.groups(), tables.length);
        for (int g = 0; g < groupCount && n > 0; g++) {
            long active = before.occupancy()[g];
            if (active == 0) {
                continue;
            }
            BlockTable table = tables[g];
            long[] cells = table.cellsForRead();
            long zero = table.zeroMask();
            int i = 0;
            for (; i < n && active != 0; i++) {
                long h = seqHashes[i];
                long bits = h == 0 ? zero : BlockTable.lookup(cells, h);
                long lost = active & ~bits;
                if (lost != 0) {
                    if (i > 0) {
                        found = record(found, size, g, lost, i);
                        size += Long.bitCount(lost);
                    }
                    active &= bits;
                }
            }
            if (active != 0) {
                found = record(found, size, g, active, n);
                size += Long.bitCount(active);
            }
        }
        if (size == 0) {
            return List.of();
        }
        WorkerSlots.View after = slots.view();
        List<WorkerMatch> out = new ArrayList<>(size);
        for (int k = 0; k < size; k++) {
            int slot = (int) (found[k] >>> 32);
            if (after == before || before.sameAssignment(slot, after)) {
                out.add(new WorkerMatch(before.names()[slot], (int) found[k]));
            }
        }
        return out;
    }

    private static long[] record(long[] found, int size, int group, long slotsMask, int matched) {
        int need = size + Long.bitCount(slotsMask);
        if (found == null || found.length < need) {
            found = found == null ? new long[Math.max(16, need)] : Arrays.copyOf(found, Math.max(need, found.length * 2));
        }
        for (long m = slotsMask; m != 0; m &= m - 1) {
            long slot = ((long) group << 6) | Long.numberOfTrailingZeros(m);
            found[size++] = (slot << 32) | matched;
        }
        return found;
    }

    /** Blocks held by {@code workerId} (0 when unknown). */
    public long blockCount(String workerId) {
        int slot = readerSlot(workerId);
        return slot < 0 ? 0 : slotValue(counts, slot);
    }

    /** XOR of the seq hashes held by {@code workerId} (0 when unknown); with the count, its digest. */
    public long xorDigest(String workerId) {
        int slot = readerSlot(workerId);
        return slot < 0 ? 0 : slotValue(xors, slot);
    }

    /** Resident (block, worker) pairs. */
    public long residentPairs() {
        WorkerSlots.View v = slots.view();
        long total = 0;
        for (int s = 0; s < v.names().length; s++) {
            if (v.names()[s] != null) {
                total += slotValue(counts, s);
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

    /** The seq hashes {@code workerId} holds, in table order (a full scan: tests, tools, snapshots). */
    public long[] blocksOf(String workerId) {
        WorkerSlots.View v = slots.view();
        int slot = indexOf(v.names(), workerId);
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

    /** Every worker's seq hashes in one scan per group (writer thread; used for index snapshots). */
    public Map<String, long[]> exportBlocks() {
        WorkerSlots.View v = slots.view();
        LongList[] perSlot = new LongList[v.names().length];
        for (int s = 0; s < perSlot.length; s++) {
            if (v.names()[s] != null) {
                perSlot[s] = new LongList((int) Math.min(Integer.MAX_VALUE - 8, slotValue(counts, s)));
            }
        }
        BlockTable[] tables = groups;
        for (int g = 0; g < tables.length; g++) {
            int base = g << 6;
            tables[g].forEach((h, mask) -> {
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

    /** Records that {@code workerId} holds {@code seqHash}; true when it was not held before. */
    public boolean store(String workerId, long seqHash) {
        return storeAt(acquireSlot(workerId), seqHash);
    }

    /** Records that {@code workerId} dropped {@code seqHash}; true when it was held. */
    public boolean remove(String workerId, long seqHash) {
        int slot = slots.slotOf(workerId);
        return slot >= 0 && removeAt(slot, seqHash);
    }

    /** Drops every block of {@code workerId}; the worker keeps its slot. */
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

    /** Makes {@code seqHashes} exactly the set {@code workerId} holds (blocks kept stay visible). */
    public void replace(String workerId, long[] seqHashes) {
        replaceAt(acquireSlot(workerId), seqHashes);
    }

    // Slot-level operations for the applier (same package). Overridable only so that tests can
    // build a deliberately broken index; production code never subclasses this class.

    int slotOf(String workerId) {
        return slots.slotOf(workerId);
    }

    int acquireSlot(String workerId) {
        int slot = slots.acquire(workerId);
        int g = slot >>> 6;
        if (g >= groups.length) {
            BlockTable[] grown = Arrays.copyOf(groups, g + 1);
            for (int i = groups.length; i < grown.length; i++) {
                grown[i] = new BlockTable(i == 0 ? initialGroupCapacity : 16);
            }
            long[] c = Arrays.copyOf(counts, grown.length << 6);
            long[] x = Arrays.copyOf(xors, grown.length << 6);
            counts = c;
            xors = x;
            groups = grown;
        }
        return slot;
    }

    boolean storeAt(int slot, long seqHash) {
        long bit = 1L << (slot & 63);
        long before = groups[slot >>> 6].or(seqHash, bit);
        if ((before & bit) != 0) {
            return false;
        }
        adjust(slot, 1, seqHash);
        return true;
    }

    boolean removeAt(int slot, long seqHash) {
        long bit = 1L << (slot & 63);
        long before = groups[slot >>> 6].andNot(seqHash, bit);
        if ((before & bit) == 0) {
            return false;
        }
        adjust(slot, -1, seqHash);
        return true;
    }

    void clearAt(int slot) {
        long keep = ~(1L << (slot & 63));
        groups[slot >>> 6].rewriteAll((h, mask) -> mask & keep);
        resetDigest(slot);
    }

    /** Releases the slots first (readers start omitting them), then clears their bits. */
    void dropSlots(int... dropped) {
        slots.release(dropped);
        long[] perGroup = new long[groups.length];
        for (int slot : dropped) {
            if (slot >= 0) {
                perGroup[slot >>> 6] |= 1L << (slot & 63);
                resetDigest(slot);
            }
        }
        for (int g = 0; g < perGroup.length; g++) {
            long keep = ~perGroup[g];
            if (perGroup[g] != 0) {
                groups[g].rewriteAll((h, mask) -> mask & keep);
            }
        }
    }

    void replaceAt(int slot, long[] seqHashes) {
        BlockTable wanted = new BlockTable(seqHashes.length);
        for (long h : seqHashes) {
            wanted.or(h, 1);
            storeAt(slot, h);
        }
        long bit = 1L << (slot & 63);
        groups[slot >>> 6].rewriteAll((h, mask) -> {
            if ((mask & bit) != 0 && wanted.get(h) == 0) {
                adjust(slot, -1, h);
                return mask & ~bit;
            }
            return mask;
        });
    }

    long countAt(int slot) {
        return slotValue(counts, slot);
    }

    long xorAt(int slot) {
        return slotValue(xors, slot);
    }

    /** Pre-sizes the table of {@code slot}'s group for {@code moreBlocks} additional blocks. */
    void reserve(int slot, int moreBlocks) {
        groups[slot >>> 6].ensureCapacity(moreBlocks);
    }

    private void adjust(int slot, int delta, long seqHash) {
        long[] c = counts;
        long[] x = xors;
        SLOT_LONG.setRelease(c, slot, c[slot] + delta);
        SLOT_LONG.setRelease(x, slot, x[slot] ^ seqHash);
    }

    private void resetDigest(int slot) {
        SLOT_LONG.setRelease(counts, slot, 0L);
        SLOT_LONG.setRelease(xors, slot, 0L);
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
