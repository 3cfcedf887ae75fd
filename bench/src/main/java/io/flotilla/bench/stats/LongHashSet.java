package io.flotilla.bench.stats;

/**
 * Open-addressing set of {@code long}s (linear probing, about 12–20 bytes per element): the oracle
 * remembers every block of a full-size trace without boxing. Not thread-safe.
 */
final class LongHashSet {

    private long[] table = new long[1 << 10];
    private int size;
    private boolean hasZero;

    boolean contains(long key) {
        if (key == 0) {
            return hasZero;
        }
        int mask = table.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            long k = table[i];
            if (k == key) {
                return true;
            }
            if (k == 0) {
                return false;
            }
        }
    }

    /** Adds the key; returns false when it was already present. */
    boolean add(long key) {
        if (key == 0) {
            boolean added = !hasZero;
            hasZero = true;
            return added;
        }
        if ((size + 1) * 10L > table.length * 6L) {
            grow();
        }
        int mask = table.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            long k = table[i];
            if (k == key) {
                return false;
            }
            if (k == 0) {
                table[i] = key;
                size++;
                return true;
            }
        }
    }

    int size() {
        return size + (hasZero ? 1 : 0);
    }

    private void grow() {
        long[] old = table;
        table = new long[old.length * 2];
        int mask = table.length - 1;
        for (long k : old) {
            if (k != 0) {
                int i = slot(k, mask);
                while (table[i] != 0) {
                    i = (i + 1) & mask;
                }
                table[i] = k;
            }
        }
    }

    private static int slot(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }
}
