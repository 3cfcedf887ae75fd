package io.flotilla.indexer.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Open-addressing map from a {@code seq_hash} to a 64-bit mask of worker slots (one group of 64
 * slots), written by one thread and read by any number of threads without locks.
 *
 * <p>Layout: one {@code long[]} of cells, key at {@code 2i} and mask at {@code 2i + 1}, so a probe
 * touches one cache line. Key {@code 0} marks an empty cell; the real hash {@code 0} lives in
 * {@link #zeroMask}. Linear probing, Fibonacci hashing, capacity a power of two.
 *
 * <p>Invariants that make lock-free reads safe:
 * <ul>
 *   <li>Within one cell array, a cell's key changes at most once, from empty to its final value;
 *       entries are never moved or deleted in place. A removed entry stays as a tombstone (mask 0)
 *       until the writer rehashes into a new array, which it publishes with a volatile write.</li>
 *   <li>A mask is one {@code long}, written with release semantics and read with acquire: a reader
 *       sees each block's mask either before or after an update, never torn, and never the mask of
 *       a different key.</li>
 *   <li>At most 3/4 of the cells are used, so every probe ends at an empty cell.</li>
 * </ul>
 * Memory: 16 bytes a cell; the load factor of live entries stays between 1/4 and 3/4 (growth at 3/4
 * used cells, tombstones included; shrink below 1/4 live), so at most 64 and typically 21-43 bytes
 * per distinct block, shared by every worker of the group that holds it.
 * A reader still holding an array that was replaced by a rehash sees a frozen, older state: stale,
 * never inconsistent.
 */
final class BlockTable {

    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);
    private static final long PHI = 0x9E3779B97F4A7C15L;
    private static final int MIN_CAPACITY = 16;

    /** Rewrites the mask of one live entry during a bulk scan; returns the new mask. */
    @FunctionalInterface
    interface MaskRewrite {
        long apply(long seqHash, long mask);
    }

    /** Receives the live entries of a scan. */
    @FunctionalInterface
    interface EntryVisitor {
        void accept(long seqHash, long mask);
    }

    private volatile long[] cells;
    private volatile long zeroMask;
    /** Live entries as readers see them: 0 lets a query skip the table (lower tiers are often empty). */
    private volatile int liveForReaders;
    // Writer-only bookkeeping.
    private int used;   // cells with a key (live + tombstones)
    private int live;   // cells with a non-zero mask
    private boolean zeroLive;

    BlockTable(int expectedEntries) {
        cells = new long[2 * capacityFor(expectedEntries)];
    }

    // ---------------------------------------------------------------- readers (any thread)

    /** The mask of {@code seqHash}, 0 when absent. */
    long get(long seqHash) {
        return seqHash == 0 ? zeroMask : lookup(cells, seqHash);
    }

    /** The current cell array, for a reader doing many lookups; pass it to {@link #lookup}. */
    long[] cellsForRead() {
        return cells;
    }

    long zeroMask() {
        return zeroMask;
    }

    /** True when a reader may skip the table: it held no entry at some instant since the call began. */
    boolean emptyForReaders() {
        return liveForReaders == 0;
    }

    /** Mask of a non-zero {@code seqHash} in {@code cells} (an array from {@link #cellsForRead}). */
    static long lookup(long[] cells, long seqHash) {
        int capacity = cells.length >>> 1;
        int mask = capacity - 1;
        int i = (int) ((seqHash * PHI) >>> Long.numberOfLeadingZeros(capacity - 1L));
        while (true) {
            long k = (long) CELL.getAcquire(cells, i << 1);
            if (k == seqHash) {
                return (long) CELL.getAcquire(cells, (i << 1) + 1);
            }
            if (k == 0) {
                return 0;
            }
            i = (i + 1) & mask;
        }
    }

    // ---------------------------------------------------------------- writer (one thread)

    /** Sets {@code bits} on {@code seqHash}; returns the mask before. */
    long or(long seqHash, long bits) {
        if (seqHash == 0) {
            long old = zeroMask;
            zeroMask = old | bits;
            zeroLive = (old | bits) != 0;
            publishSize();
            return old;
        }
        long[] c = cells;
        int at = findOrEmpty(c, seqHash);
        long key = c[at << 1];
        if (key == seqHash) {
            long old = c[(at << 1) + 1];
            long now = old | bits;
            if (now != old) {
                CELL.setRelease(c, (at << 1) + 1, now);
                if (old == 0) {
                    live++;
                    publishSize();
                }
            }
            return old;
        }
        if (bits == 0) {
            return 0;
        }
        if (used + 1 > (c.length >>> 1) - ((c.length >>> 1) >>> 2)) {
            rehash(live + 1);
            c = cells;
            at = findOrEmpty(c, seqHash);
        }
        CELL.setRelease(c, (at << 1) + 1, bits);
        CELL.setRelease(c, at << 1, seqHash);
        used++;
        live++;
        publishSize();
        return 0;
    }

    /** Clears {@code bits} on {@code seqHash}; returns the mask before (0 when absent). */
    long andNot(long seqHash, long bits) {
        if (seqHash == 0) {
            long old = zeroMask;
            zeroMask = old & ~bits;
            zeroLive = (old & ~bits) != 0;
            publishSize();
            return old;
        }
        long[] c = cells;
        int at = findOrEmpty(c, seqHash);
        if (c[at << 1] != seqHash) {
            return 0;
        }
        long old = c[(at << 1) + 1];
        long now = old & ~bits;
        if (now != old) {
            CELL.setRelease(c, (at << 1) + 1, now);
            if (now == 0) {
                live--;
                shrinkIfSparse();
                publishSize();
            }
        }
        return old;
    }

    /**
     * Visits every live entry and stores {@code rewrite}'s result as its new mask. Entries whose
     * mask becomes 0 turn into tombstones; the table shrinks if mostly tombstones remain.
     */
    void rewriteAll(MaskRewrite rewrite) {
        if (zeroLive) {
            long now = rewrite.apply(0, zeroMask);
            zeroMask = now;
            zeroLive = now != 0;
        }
        long[] c = cells;
        for (int i = 0; i < c.length; i += 2) {
            long old = c[i + 1];
            if (old != 0) {
                long now = rewrite.apply(c[i], old);
                if (now != old) {
                    CELL.setRelease(c, i + 1, now);
                    if (now == 0) {
                        live--;
                    }
                }
            }
        }
        shrinkIfSparse();
        publishSize();
    }

    /** Visits every live entry (writer thread, or a reader accepting a per-entry consistent scan). */
    void forEach(EntryVisitor visitor) {
        long z = zeroMask;
        if (z != 0) {
            visitor.accept(0, z);
        }
        long[] c = cells;
        for (int i = 0; i < c.length; i += 2) {
            long k = (long) CELL.getAcquire(c, i);
            if (k != 0) {
                long m = (long) CELL.getAcquire(c, i + 1);
                if (m != 0) {
                    visitor.accept(k, m);
                }
            }
        }
    }

    /** Makes room for {@code entries} live entries without a rehash on the way. */
    void ensureCapacity(int entries) {
        if (used + entries > ((cells.length >>> 1) * 3) >>> 2) {
            rehash(live + entries);
        }
    }

    /** Live entries (writer's count). */
    int size() {
        return live + (zeroLive ? 1 : 0);
    }

    /**
     * Readers skip the table only while it is empty. The count is published after each change, so a
     * reader that sees 0 misses at most blocks stored during its query: a stale read, like any other.
     */
    private void publishSize() {
        liveForReaders = size();
    }

    /** Cells allocated (for memory accounting and tests). */
    int capacity() {
        return cells.length >>> 1;
    }

    private static int findOrEmpty(long[] c, long seqHash) {
        int capacity = c.length >>> 1;
        int mask = capacity - 1;
        int i = (int) ((seqHash * PHI) >>> Long.numberOfLeadingZeros(capacity - 1L));
        while (true) {
            long k = c[i << 1];
            if (k == seqHash || k == 0) {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /**
     * Keeps the load factor at or above 1/4 (at most 64 bytes of cells per live entry): below it,
     * rehashes to a load factor between 1/4 and 1/2. Growth leaves 3/8, so the two do not thrash.
     */
    private void shrinkIfSparse() {
        int capacity = cells.length >>> 1;
        if (capacity > MIN_CAPACITY && live < capacity >>> 2) {
            rehash(live);
        }
    }

    /** Copies live entries into a fresh array sized for {@code liveEntries}; tombstones are dropped. */
    private void rehash(int liveEntries) {
        long[] old = cells;
        long[] fresh = new long[2 * capacityFor(liveEntries)];
        int n = 0;
        for (int i = 0; i < old.length; i += 2) {
            long m = old[i + 1];
            if (m != 0) {
                int at = findOrEmpty(fresh, old[i]);
                fresh[at << 1] = old[i];
                fresh[(at << 1) + 1] = m;
                n++;
            }
        }
        used = n;
        live = n;
        cells = fresh; // volatile publish: readers that load it see the copied cells
    }

    /** Smallest power of two that holds {@code entries} at a load factor of at most 1/2. */
    private static int capacityFor(int entries) {
        long want = Math.max(MIN_CAPACITY, 2L * Math.max(entries, 1));
        long cap = Long.highestOneBit(want - 1) << 1;
        if (cap > (1 << 29)) {
            throw new IllegalStateException("block table too large: " + entries + " entries");
        }
        return (int) cap;
    }
}
