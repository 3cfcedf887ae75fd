package io.flotilla.worker.kvbm;

import java.util.Arrays;

/**
 * Eviction order of a lower KV tier: a segmented LRU over slot numbers. A block enters the
 * probationary segment; a second use (a hit, an onboarding) moves it to the protected segment, which
 * keeps at most {@code protectedCapacity} blocks and demotes its least recent block to the
 * probationary segment's most recent end. Victims come from the probationary segment's least recent
 * end first, so a block used once (a turn nobody came back to) goes before one used twice (a
 * conversation that returns). Flat int arrays, no per-block objects. Not thread-safe.
 */
final class SlruList {

    static final byte NONE = 0;
    static final byte PROBATION = 1;
    static final byte PROTECTED = 2;
    private static final int NIL = -1;

    private final int[] prev;
    private final int[] next;
    private final byte[] segment;
    private final int[] head = {NIL, NIL, NIL};
    private final int[] tail = {NIL, NIL, NIL};
    private final int[] count = new int[3];
    private final int protectedCapacity;

    SlruList(int slots, int protectedCapacity) {
        this.prev = new int[slots];
        this.next = new int[slots];
        this.segment = new byte[slots];
        Arrays.fill(prev, NIL);
        Arrays.fill(next, NIL);
        this.protectedCapacity = Math.max(0, protectedCapacity);
    }

    /** Adds {@code slot} (not linked) as the most recent probationary block. */
    void insert(int slot) {
        if (segment[slot] != NONE) {
            throw new IllegalStateException("slot " + slot + " is already linked");
        }
        append(slot, PROBATION);
    }

    /** A use of linked {@code slot}: it becomes the most recent protected block. */
    void touch(int slot) {
        if (segment[slot] == NONE) {
            return;
        }
        unlink(slot);
        append(slot, PROTECTED);
        while (count[PROTECTED] > protectedCapacity) {
            int demoted = head[PROTECTED];
            unlink(demoted);
            append(demoted, PROBATION);
        }
    }

    void remove(int slot) {
        if (segment[slot] != NONE) {
            unlink(slot);
        }
    }

    boolean linked(int slot) {
        return segment[slot] != NONE;
    }

    /** The least recent probationary block, else the least recent protected one; -1 when empty. */
    int eldest() {
        return head[PROBATION] != NIL ? head[PROBATION] : head[PROTECTED];
    }

    /** The block after {@code slot} in eviction order, or -1. */
    int after(int slot) {
        int n = next[slot];
        if (n != NIL) {
            return n;
        }
        return segment[slot] == PROBATION ? head[PROTECTED] : NIL;
    }

    int size() {
        return count[PROBATION] + count[PROTECTED];
    }

    int protectedSize() {
        return count[PROTECTED];
    }

    private void append(int slot, byte seg) {
        segment[slot] = seg;
        prev[slot] = tail[seg];
        next[slot] = NIL;
        if (tail[seg] == NIL) {
            head[seg] = slot;
        } else {
            next[tail[seg]] = slot;
        }
        tail[seg] = slot;
        count[seg]++;
    }

    private void unlink(int slot) {
        byte seg = segment[slot];
        int p = prev[slot];
        int n = next[slot];
        if (p == NIL) {
            head[seg] = n;
        } else {
            next[p] = n;
        }
        if (n == NIL) {
            tail[seg] = p;
        } else {
            prev[n] = p;
        }
        prev[slot] = NIL;
        next[slot] = NIL;
        segment[slot] = NONE;
        count[seg]--;
    }
}
