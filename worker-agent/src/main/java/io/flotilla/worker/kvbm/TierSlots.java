package io.flotilla.worker.kvbm;

import io.flotilla.protocol.v1.KvTier;

import java.util.Arrays;

/**
 * The bookkeeping of one lower KV tier's fixed slots: which block each slot holds, the seq_hash
 * index, the eviction order ({@link SlruList}) and the pins of slots being read. The bytes live
 * elsewhere (off-heap for host memory, files for disk); this class never touches them.
 *
 * <p>Slot states: FREE (on the free stack); RESERVED (a copy into it is in flight; not indexed);
 * READY (indexed, in the eviction order); DROPPED (left the index while pinned; free once unpinned).
 * A pinned slot is never chosen as a victim, so bytes being read are never overwritten.
 *
 * <p>Heap: 8 (seq hash) + 4 (checksum) + 9 (order links and segment) + 2 (state, pins) + 4 (free
 * stack) + 5 to 11 (index) ≈ 32 to 38 bytes per slot. Not thread-safe: {@link TierState}'s one writer
 * makes every call.
 */
final class TierSlots {

    static final byte FREE = 0;
    static final byte RESERVED = 1;
    static final byte READY = 2;
    static final byte DROPPED = 3;
    /** Victims looked at before a reservation gives up (everything older is pinned). */
    private static final int VICTIM_SCAN = 64;

    private final KvTier tier;
    private final long[] keys;
    private final int[] checksums;
    private final byte[] state;
    private final byte[] pins;
    private final int[] freeStack;
    private int freeTop;
    private final SlotIndex index;
    private final SlruList order;
    /** XOR of the indexed seq hashes (the tier's digest, with {@link #used()}). */
    private long xor;

    /** What a reservation displaced: the victim's block, whose bytes are still in the reserved slot. */
    record Victim(long seqHash, int checksum) {
    }

    TierSlots(KvTier tier, int slots) {
        if (slots <= 0) {
            throw new IllegalArgumentException(tier + " needs at least one slot");
        }
        this.tier = tier;
        this.keys = new long[slots];
        this.checksums = new int[slots];
        this.state = new byte[slots];
        this.pins = new byte[slots];
        this.freeStack = new int[slots];
        for (int i = 0; i < slots; i++) {
            freeStack[i] = slots - 1 - i; // low slots first: segments and slabs are created in order
        }
        this.freeTop = slots;
        this.index = new SlotIndex(keys);
        this.order = new SlruList(slots, (int) (slots * 0.8));
    }

    KvTier tier() {
        return tier;
    }

    int capacity() {
        return keys.length;
    }

    /** Blocks held (indexed). */
    int used() {
        return index.size();
    }

    /** XOR of the seq hashes of every block held. */
    long xor() {
        return xor;
    }

    /** The READY slot holding {@code seqHash}, or -1. */
    int lookup(long seqHash) {
        return index.get(seqHash);
    }

    long seqHashOf(int slot) {
        return keys[slot];
    }

    int checksumOf(int slot) {
        return checksums[slot];
    }

    /** A use of the block in READY {@code slot}: it moves up in the eviction order. */
    void touch(int slot) {
        order.touch(slot);
    }

    /**
     * A slot for a new block: a free one, else the least valuable unpinned READY block's, which leaves
     * the index now ({@code victim[0]} is set to it). Returns -1 when every candidate is pinned.
     */
    int reserve(Victim[] victim) {
        victim[0] = null;
        int slot;
        if (freeTop > 0) {
            slot = freeStack[--freeTop];
        } else {
            slot = order.eldest();
            for (int i = 0; slot >= 0 && pins[slot] > 0 && i < VICTIM_SCAN; i++) {
                slot = order.after(slot);
            }
            if (slot < 0 || pins[slot] > 0) {
                return -1;
            }
            victim[0] = new Victim(keys[slot], checksums[slot]);
            order.remove(slot);
            index.remove(slot);
            xor ^= keys[slot];
        }
        state[slot] = RESERVED;
        return slot;
    }

    /** A reserved slot now holds {@code seqHash}'s bytes: it is indexed and enters the eviction order. */
    void commit(int slot, long seqHash, int checksum) {
        require(slot, RESERVED);
        keys[slot] = seqHash;
        checksums[slot] = checksum;
        state[slot] = READY;
        index.put(slot);
        order.insert(slot);
        xor ^= seqHash;
    }

    /** A reserved slot whose copy failed (or whose block turned out to be held already) goes back. */
    void abandon(int slot) {
        require(slot, RESERVED);
        free(slot);
    }

    /** Keeps READY {@code slot}'s bytes from being overwritten until {@link #unpin}. */
    void pin(int slot) {
        require(slot, READY);
        if (pins[slot] == Byte.MAX_VALUE) {
            throw new IllegalStateException("slot " + slot + " pinned too often");
        }
        pins[slot]++;
    }

    void unpin(int slot) {
        if (pins[slot] <= 0) {
            throw new IllegalStateException("slot " + slot + " is not pinned");
        }
        if (--pins[slot] == 0 && state[slot] == DROPPED) {
            free(slot);
        }
    }

    /** Drops READY {@code slot}'s block (a failed checksum, a clear); a pinned slot is freed on unpin. */
    void drop(int slot) {
        require(slot, READY);
        order.remove(slot);
        index.remove(slot);
        xor ^= keys[slot];
        if (pins[slot] > 0) {
            state[slot] = DROPPED;
        } else {
            free(slot);
        }
    }

    /** Drops every READY block; returns their seq hashes. */
    long[] clear() {
        long[] out = new long[index.size()];
        int n = 0;
        for (int slot = 0; slot < keys.length; slot++) {
            if (state[slot] == READY) {
                out[n++] = keys[slot];
                drop(slot);
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /** Seq hashes of every READY block, in slot order. */
    long[] seqHashes() {
        long[] out = new long[index.size()];
        int n = 0;
        for (int slot = 0; slot < keys.length && n < out.length; slot++) {
            if (state[slot] == READY) {
                out[n++] = keys[slot];
            }
        }
        return out;
    }

    /** Restores a READY block found at start-up (disk rebuild); blocks are given oldest first. */
    void restore(int slot, long seqHash, int checksum) {
        if (state[slot] != FREE) {
            throw new IllegalStateException("slot " + slot + " restored twice");
        }
        for (int i = freeTop - 1; i >= 0; i--) {
            if (freeStack[i] == slot) {
                freeStack[i] = freeStack[--freeTop];
                break;
            }
        }
        state[slot] = RESERVED;
        commit(slot, seqHash, checksum);
    }

    /** Re-sorts the free stack so the lowest free slot is handed out first (after a restore). */
    void sortFreeStack() {
        Arrays.sort(freeStack, 0, freeTop);
        for (int i = 0, j = freeTop - 1; i < j; i++, j--) {
            int t = freeStack[i];
            freeStack[i] = freeStack[j];
            freeStack[j] = t;
        }
    }

    /** Approximate heap bytes of this bookkeeping. */
    long heapBytes() {
        return keys.length * (8L + 4 + 1 + 1 + 4 + 4 + 4 + 1) + index.tableBytes();
    }

    /** Checks the state invariants; throws on the first breach (tests). */
    void verifyInvariants() {
        int ready = 0;
        int free = 0;
        for (int slot = 0; slot < keys.length; slot++) {
            switch (state[slot]) {
                case READY -> {
                    ready++;
                    if (index.get(keys[slot]) != slot || !order.linked(slot)) {
                        throw new IllegalStateException(tier + " slot " + slot + " is READY but not indexed and ordered");
                    }
                }
                case FREE -> free++;
                case DROPPED -> {
                    if (pins[slot] == 0) {
                        throw new IllegalStateException(tier + " slot " + slot + " is DROPPED but unpinned");
                    }
                }
                default -> { }
            }
        }
        if (ready != index.size() || ready != order.size() || free != freeTop) {
            throw new IllegalStateException(tier + " counts disagree: ready " + ready + ", index " + index.size()
                    + ", order " + order.size() + ", free " + free + "/" + freeTop);
        }
    }

    private void free(int slot) {
        state[slot] = FREE;
        freeStack[freeTop++] = slot;
    }

    private void require(int slot, byte expected) {
        if (state[slot] != expected) {
            throw new IllegalStateException(tier + " slot " + slot + " is in state " + state[slot] + ", expected " + expected);
        }
    }
}
