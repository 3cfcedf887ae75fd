package io.flotilla.indexer.core;

import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * Interns worker ids to dense int slots (slot {@code s} is bit {@code s & 63} of group
 * {@code s >>> 6}), reusing freed slots lowest first so groups stay full.
 *
 * <p>One writer thread assigns and releases slots; every change publishes a new immutable
 * {@link View}. Each assignment gets a fresh, never reused {@code token}, so a reader can tell
 * "the same worker in slot 5" from "a new worker that took over slot 5 while I was reading": it
 * takes a view before reading masks and compares tokens against a view taken after.
 */
final class WorkerSlots {

    /**
     * An immutable picture of the slot assignment.
     *
     * @param names     worker id per slot, {@code null} when free
     * @param tokens    assignment token per slot, 0 when free
     * @param occupancy per group, the mask of assigned slots
     */
    record View(String[] names, long[] tokens, long[] occupancy) {

        int groups() {
            return occupancy.length;
        }

        /** True when {@code slot} holds the same assignment in this view and in {@code other}. */
        boolean sameAssignment(int slot, View other) {
            return slot < other.tokens.length && tokens[slot] == other.tokens[slot];
        }
    }

    private final Map<String, Integer> slotById = new HashMap<>();
    private final BitSet assigned = new BitSet();
    private long nextToken = 1;
    private volatile View view = new View(new String[0], new long[0], new long[0]);

    /** The latest published assignment (any thread). */
    View view() {
        return view;
    }

    /** The slot of {@code workerId}, or -1 (writer thread; readers use {@link #view()}). */
    int slotOf(String workerId) {
        Integer s = slotById.get(workerId);
        return s == null ? -1 : s;
    }

    /** The slot of {@code workerId}, assigning the lowest free one if it has none. */
    int acquire(String workerId) {
        Integer existing = slotById.get(workerId);
        if (existing != null) {
            return existing;
        }
        int slot = assigned.nextClearBit(0);
        assigned.set(slot);
        slotById.put(workerId, slot);
        View v = view;
        int groups = Math.max(v.occupancy.length, (slot >>> 6) + 1);
        int slots = groups << 6;
        String[] names = Arrays.copyOf(v.names, slots);
        long[] tokens = Arrays.copyOf(v.tokens, slots);
        long[] occupancy = Arrays.copyOf(v.occupancy, groups);
        names[slot] = workerId;
        tokens[slot] = nextToken++;
        occupancy[slot >>> 6] |= 1L << (slot & 63);
        view = new View(names, tokens, occupancy);
        return slot;
    }

    /**
     * Frees the slots (ids whose slot is -1 are skipped). The new view is published before this
     * returns; the caller clears the slots' bits afterwards, and a concurrent reader that saw any
     * of those clears also sees the release when it re-reads the view.
     */
    void release(int... slots) {
        View v = view;
        String[] names = v.names.clone();
        long[] tokens = v.tokens.clone();
        long[] occupancy = v.occupancy.clone();
        boolean changed = false;
        for (int slot : slots) {
            if (slot < 0 || !assigned.get(slot)) {
                continue;
            }
            slotById.remove(names[slot]);
            assigned.clear(slot);
            names[slot] = null;
            tokens[slot] = 0;
            occupancy[slot >>> 6] &= ~(1L << (slot & 63));
            changed = true;
        }
        if (changed) {
            view = new View(names, tokens, occupancy);
        }
    }

    /** Assigned slots. */
    int size() {
        return slotById.size();
    }
}
