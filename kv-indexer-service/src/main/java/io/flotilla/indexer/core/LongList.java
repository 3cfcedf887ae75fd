package io.flotilla.indexer.core;

import java.util.Arrays;

/** A growable list of primitive longs (no boxing); single-threaded. */
final class LongList {

    private long[] values;
    private int size;

    LongList(int initialCapacity) {
        values = new long[Math.max(4, initialCapacity)];
    }

    void add(long value) {
        if (size == values.length) {
            values = Arrays.copyOf(values, Math.max(8, size + (size >>> 1)));
        }
        values[size++] = value;
    }

    int size() {
        return size;
    }

    long[] toArray() {
        return size == values.length ? values : Arrays.copyOf(values, size);
    }
}
