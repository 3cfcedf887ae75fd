package io.flotilla.worker.kvbm;

import java.util.Arrays;

/**
 * seq_hash → slot of a lower KV tier, stored as slot numbers only: the key of an entry is read from
 * the tier's own {@code long[]} of slot hashes, so the table costs 4 bytes a cell (1.33 to 2.67 cells
 * per slot at a load factor of at most 3/4) instead of a boxed map's ~80 bytes an entry. Linear
 * probing with backward-shift deletion; capacity is fixed, since a tier never indexes more blocks than
 * it has slots. Not thread-safe: the tier's owner serialises every call.
 */
final class SlotIndex {

    private static final int EMPTY = -1;

    private final int[] cells;
    private final long[] keys;
    private final int mask;
    private int size;

    /** @param keys the tier's per-slot seq hashes; an indexed slot's key must not change while indexed */
    SlotIndex(long[] keys) {
        this.keys = keys;
        long want = Math.max(4, (keys.length * 4L + 2) / 3);
        int capacity = Integer.highestOneBit((int) Math.min(1 << 30, want - 1)) << 1;
        this.cells = new int[capacity];
        Arrays.fill(cells, EMPTY);
        this.mask = capacity - 1;
    }

    int size() {
        return size;
    }

    /** The slot indexed under {@code seqHash}, or -1. */
    int get(long seqHash) {
        for (int i = home(seqHash); ; i = (i + 1) & mask) {
            int slot = cells[i];
            if (slot == EMPTY) {
                return -1;
            }
            if (keys[slot] == seqHash) {
                return slot;
            }
        }
    }

    /** Indexes {@code slot} under its key; the key must not be indexed yet. */
    void put(int slot) {
        long key = keys[slot];
        int i = home(key);
        while (cells[i] != EMPTY) {
            if (keys[cells[i]] == key) {
                throw new IllegalStateException("seq hash " + Long.toUnsignedString(key, 16) + " is already indexed");
            }
            i = (i + 1) & mask;
        }
        cells[i] = slot;
        size++;
    }

    /** Removes {@code slot}'s entry (looked up by its key); false when it was not indexed. */
    boolean remove(int slot) {
        long key = keys[slot];
        int i = home(key);
        while (cells[i] != EMPTY && cells[i] != slot) {
            i = (i + 1) & mask;
        }
        if (cells[i] == EMPTY) {
            return false;
        }
        int hole = i;
        for (int j = (hole + 1) & mask; cells[j] != EMPTY; j = (j + 1) & mask) {
            int h = home(keys[cells[j]]);
            boolean movable = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
            if (movable) {
                cells[hole] = cells[j];
                hole = j;
            }
        }
        cells[hole] = EMPTY;
        size--;
        return true;
    }

    /** Heap bytes of the table itself. */
    long tableBytes() {
        return 4L * cells.length;
    }

    private int home(long key) {
        long z = key * 0x9E3779B97F4A7C15L;
        return (int) (z ^ (z >>> 29)) & mask;
    }
}
