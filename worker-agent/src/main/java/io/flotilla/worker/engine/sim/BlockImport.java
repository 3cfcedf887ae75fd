package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.hash.ScopedHasher;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.KvBlockRef;

import java.util.ArrayList;
import java.util.List;

/**
 * The first blocks of a prompt being imported into a {@link BlockPool}: one held slot per block, in
 * prefix order. Resident blocks are referenced as they are; missing ones get fresh unregistered
 * slots that only the importer writes, registered by {@link #commit} without rewriting their bytes.
 * Every reference is either released ({@link #release}) or handed to a sequence ({@link #handTo}),
 * exactly once. Not thread-safe: the scheduler's caller serialises it.
 */
final class BlockImport {

    enum State { RESERVED, COMMITTED, DONE }

    private final long[] seqHashes;
    private final long[] localHashes;
    private final int[] slots;
    private final boolean[] fetched;
    private final int residentTokens;
    private State state = State.RESERVED;

    private BlockImport(long[] seqHashes, long[] localHashes, int[] slots, boolean[] fetched, int residentTokens) {
        this.seqHashes = seqHashes;
        this.localHashes = localHashes;
        this.slots = slots;
        this.fetched = fetched;
        this.residentTokens = residentTokens;
    }

    /**
     * Holds a slot for each of the first {@code blocks} full blocks of {@code tokens}; may evict cached
     * blocks (the caller flushes the events).
     *
     * @throws EngineOverloadedException when the pool has too few free or evictable blocks
     */
    static BlockImport reserve(BlockPool pool, ScopedHasher hasher, int[] tokens, int blocks) {
        long[] seq = new long[blocks];
        long[] local = new long[blocks];
        int[] slots = new int[blocks];
        boolean[] fetched = new boolean[blocks];
        int resident = 0;
        boolean prefix = true;
        for (int b = 0; b < blocks; b++) {
            local[b] = hasher.localHash(tokens, b);
            seq[b] = hasher.seqHash(b == 0 ? 0 : seq[b - 1], local[b], b);
            int slot = pool.lookup(seq[b]);
            if (slot >= 0) {
                pool.retain(slot);
                resident += prefix ? 1 : 0;
            } else {
                prefix = false;
                slot = pool.allocate();
                if (slot < 0) {
                    for (int i = b - 1; i >= 0; i--) {
                        pool.release(slots[i]);
                    }
                    throw new EngineOverloadedException("no KV blocks free for importing " + blocks + " blocks");
                }
                fetched[b] = true;
            }
            slots[b] = slot;
        }
        return new BlockImport(seq, local, slots, fetched, resident * hasher.blockSize());
    }

    State state() {
        return state;
    }

    long[] seqHashes() {
        return seqHashes.clone();
    }

    int residentTokens() {
        return residentTokens;
    }

    /** Destinations of the blocks to fetch, in prefix order. */
    List<KvBlockRef> toFetch(KvPayloadStore payloads) {
        List<KvBlockRef> out = new ArrayList<>();
        for (int b = 0; b < slots.length; b++) {
            if (fetched[b]) {
                out.add(payloads.locate(slots[b], seqHashes[b]));
            }
        }
        return out;
    }

    /** Index into {@link #toFetch} of the first fetched block that is not its pattern, or -1. */
    int firstCorruptBlock(KvPayloadStore payloads) {
        int i = 0;
        for (int b = 0; b < slots.length; b++) {
            if (fetched[b]) {
                if (payloads.firstMismatch(slots[b], seqHashes[b]) >= 0) {
                    return i;
                }
                i++;
            }
        }
        return -1;
    }

    /** Registers the fetched blocks in prefix order (the pool emits {@code BlockStored}). */
    void commit(BlockPool pool) {
        require(State.RESERVED);
        for (int b = 0; b < slots.length; b++) {
            if (fetched[b]) {
                slots[b] = pool.registerImported(slots[b], b == 0 ? 0 : seqHashes[b - 1], seqHashes[b], localHashes[b]);
            }
        }
        state = State.COMMITTED;
    }

    /** Gives every held reference to {@code seq}, as its first blocks. */
    void handTo(Sequence seq) {
        require(State.COMMITTED);
        for (int slot : slots) {
            seq.addSlot(slot);
        }
        state = State.DONE;
    }

    /** Releases every held reference (fresh slots return to the free stack); a no-op once done. */
    void release(BlockPool pool) {
        if (state == State.DONE) {
            return;
        }
        for (int b = slots.length - 1; b >= 0; b--) {
            pool.release(slots[b]);
        }
        state = State.DONE;
    }

    private void require(State expected) {
        if (state != expected) {
            throw new IllegalStateException("block import is " + state + ", expected " + expected);
        }
    }
}
