package io.flotilla.worker.engine.sim;

import java.util.Arrays;

/**
 * seq_hash → block slot, for the pool's resident blocks: open addressing with linear probing and
 * backward-shift deletion over two flat arrays, so a pool of N blocks costs about 24·N bytes of
 * heap instead of a boxed map's ~80·N. Capacity is fixed at construction and never exceeded because
 * the pool never holds more registered blocks than slots.
 */
final class SeqHashTable {

    private static final int EMPTY = -1;

    private final long[] keys;
    private final int[] slots;
    private final int mask;
    private int size;

    SeqHashTable(int maxEntries) {
        int capacity = Integer.highestOneBit(Math.max(2, maxEntries) * 2 - 1) << 1;
        keys = new long[capacity];
        slots = new int[capacity];
        Arrays.fill(slots, EMPTY);
        mask = capacity - 1;
    }

    int size() {
        return size;
    }

    /** The slot holding {@code seqHash}, or -1. */
    int get(long seqHash) {
        for (int i = index(seqHash); ; i = (i + 1) & mask) {
            if (slots[i] == EMPTY) {
                return -1;
            }
            if (keys[i] == seqHash) {
                return slots[i];
            }
        }
    }

    /** Maps {@code seqHash} to {@code slot}; the key must be absent. */
    void put(long seqHash, int slot) {
        int i = index(seqHash);
        while (slots[i] != EMPTY) {
            if (keys[i] == seqHash) {
                throw new IllegalStateException("seq hash already mapped");
            }
            i = (i + 1) & mask;
        }
        if (size + 1 > mask) {
            throw new IllegalStateException("table full");
        }
        keys[i] = seqHash;
        slots[i] = slot;
        size++;
    }

    /** Removes {@code seqHash}; returns its slot or -1 when it was absent. */
    int remove(long seqHash) {
        int i = index(seqHash);
        while (slots[i] != EMPTY && keys[i] != seqHash) {
            i = (i + 1) & mask;
        }
        if (slots[i] == EMPTY) {
            return -1;
        }
        int removed = slots[i];
        // Backward shift: pull later entries of the probe run into the hole so lookups never stop early.
        int hole = i;
        for (int j = (hole + 1) & mask; slots[j] != EMPTY; j = (j + 1) & mask) {
            int home = index(keys[j]);
            boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                keys[hole] = keys[j];
                slots[hole] = slots[j];
                hole = j;
            }
        }
        slots[hole] = EMPTY;
        size--;
        return removed;
    }

    private int index(long key) {
        return (int) KvPattern.mix(key) & mask;
    }
}
