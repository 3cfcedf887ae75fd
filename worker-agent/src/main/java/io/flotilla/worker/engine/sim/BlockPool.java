package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.KvEvent;

import java.util.Arrays;
import java.util.List;

/**
 * A paged KV block pool with reference counts and prefix caching by seq_hash.
 *
 * <p>Every slot is in exactly one state:
 * <ul>
 *   <li><b>free</b>: refcount 0, no identity, on the free stack;</li>
 *   <li><b>active</b>: refcount &gt; 0; <i>registered</i> (full, has a seq_hash, resident) or a
 *       sequence's partial tail block (no identity);</li>
 *   <li><b>cached</b>: refcount 0, registered, resident, on the LRU list (head = least recent).</li>
 * </ul>
 * Invariants: free + active + cached == total; each registered seq_hash maps to exactly one slot;
 * the resident set (registered slots) changes only together with a KV event: {@code BlockStored}
 * on {@link #register}, {@code BlockRemoved} on eviction in {@link #allocate} and on
 * {@link #clearCached}, {@code AllBlocksCleared} when {@code clearCached} leaves nothing resident.
 * A registered block's payload holds its {@link KvPattern}.
 *
 * <p>Not thread-safe; one scheduler owns it.
 */
public final class BlockPool {

    private static final int NIL = -1;

    private final int total;
    private final int[] refCount;
    private final long[] seqHash;
    private final boolean[] registered;
    private final int[] freeStack;
    private int freeTop;
    private final int[] lruPrev;
    private final int[] lruNext;
    private int lruHead = NIL;
    private int lruTail = NIL;
    private int cached;
    private int active;
    private final SeqHashTable index;
    private final KvPayloadStore payloads;
    private final KvEventBuffer events = new KvEventBuffer();

    /** @param payloads the blocks' bytes, or null when payloads are disabled */
    public BlockPool(int totalBlocks, KvPayloadStore payloads) {
        if (totalBlocks <= 0) {
            throw new IllegalArgumentException("totalBlocks must be positive");
        }
        this.total = totalBlocks;
        this.refCount = new int[totalBlocks];
        this.seqHash = new long[totalBlocks];
        this.registered = new boolean[totalBlocks];
        this.freeStack = new int[totalBlocks];
        for (int i = 0; i < totalBlocks; i++) {
            freeStack[i] = totalBlocks - 1 - i; // low slots first, so lazily allocated payload slabs stay few
        }
        this.freeTop = totalBlocks;
        this.lruPrev = new int[totalBlocks];
        this.lruNext = new int[totalBlocks];
        Arrays.fill(lruPrev, NIL);
        Arrays.fill(lruNext, NIL);
        this.index = new SeqHashTable(totalBlocks);
        this.payloads = payloads;
    }

    public int totalBlocks() { return total; }
    public int activeBlocks() { return active; }
    public int cachedBlocks() { return cached; }
    public int freeBlocks() { return freeTop; }
    public int residentBlocks() { return index.size(); }

    /** Blocks an allocation could obtain now: free ones plus evictable cached ones. */
    public int availableBlocks() { return freeTop + cached; }

    public int refCount(int slot) { return refCount[slot]; }
    public boolean isRegistered(int slot) { return registered[slot]; }
    public boolean isCached(int slot) { return registered[slot] && refCount[slot] == 0; }

    /** The seq_hash a registered slot holds. */
    public long seqHashOf(int slot) {
        if (!registered[slot]) {
            throw new IllegalStateException("slot " + slot + " holds no registered block");
        }
        return seqHash[slot];
    }

    /** The slot holding resident block {@code hash} (active or cached), or -1. */
    public int lookup(long hash) {
        return index.get(hash);
    }

    /** The payload store, or null when payloads are disabled. */
    public KvPayloadStore payloads() {
        return payloads;
    }

    /** Adds a reference to a resident or active slot; a cached block becomes active. */
    public void retain(int slot) {
        if (refCount[slot] == 0) {
            if (!registered[slot]) {
                throw new IllegalStateException("slot " + slot + " is free");
            }
            unlinkLru(slot);
            active++;
        }
        refCount[slot]++;
    }

    /** Drops a reference; at zero a registered block becomes cached (most recent), a partial one free. */
    public void release(int slot) {
        if (refCount[slot] <= 0) {
            throw new IllegalStateException("slot " + slot + " released more often than retained");
        }
        if (--refCount[slot] == 0) {
            active--;
            if (registered[slot]) {
                appendLru(slot);
            } else {
                freeStack[freeTop++] = slot;
            }
        }
    }

    /**
     * A slot with no identity and refcount 1: a free one if any, else the least recently used
     * cached block is evicted (emitting {@code BlockRemoved}). Returns -1 when every block is active.
     */
    public int allocate() {
        int slot;
        if (freeTop > 0) {
            slot = freeStack[--freeTop];
        } else if (lruHead != NIL) {
            slot = lruHead;
            unlinkLru(slot);
            unregister(slot);
            events.removed(seqHash[slot]);
        } else {
            return -1;
        }
        refCount[slot] = 1;
        active++;
        return slot;
    }

    /**
     * Gives active unregistered {@code slot} the identity {@code hash} now that it is full. When
     * {@code hash} is already resident in another slot, that slot gains this reference instead,
     * {@code slot} returns to the free stack and no event is emitted; else the block's pattern is
     * written and {@code BlockStored} emitted. Returns the slot that now holds the block.
     */
    public int register(int slot, long parentHash, long hash, long localHash) {
        return register(slot, parentHash, hash, localHash, true);
    }

    /**
     * As {@link #register(int, long, long, long)} for a block whose bytes were imported into
     * {@code slot} from another engine: the payload is kept as it is (the importer verified it).
     */
    public int registerImported(int slot, long parentHash, long hash, long localHash) {
        return register(slot, parentHash, hash, localHash, false);
    }

    private int register(int slot, long parentHash, long hash, long localHash, boolean fillPattern) {
        if (refCount[slot] <= 0 || registered[slot]) {
            throw new IllegalStateException("slot " + slot + " is not an active unregistered block");
        }
        int existing = index.get(hash);
        if (existing >= 0) {
            retain(existing);
            release(slot);
            return existing;
        }
        registered[slot] = true;
        seqHash[slot] = hash;
        index.put(hash, slot);
        if (payloads != null && fillPattern) {
            payloads.fillPattern(slot, hash);
        }
        events.stored(parentHash, hash, localHash);
        return slot;
    }

    /**
     * Drops every cached block, least recent first. Emits {@code AllBlocksCleared} when nothing stays
     * resident afterwards, else one {@code BlockRemoved}; nothing when there was nothing to drop.
     *
     * @return how many blocks were dropped
     */
    public int clearCached() {
        int dropped = cached;
        if (dropped == 0) {
            return 0;
        }
        boolean everything = index.size() == dropped;
        while (lruHead != NIL) {
            int slot = lruHead;
            unlinkLru(slot);
            unregister(slot);
            freeStack[freeTop++] = slot;
            if (!everything) {
                events.removed(seqHash[slot]);
            }
        }
        if (everything) {
            events.cleared();
        }
        return dropped;
    }

    /** seq_hashes of every resident block, in slot order. */
    public long[] residentSeqHashes() {
        long[] out = new long[index.size()];
        int n = 0;
        for (int slot = 0; slot < total; slot++) {
            if (registered[slot]) {
                out[n++] = seqHash[slot];
            }
        }
        return out;
    }

    /** The events emitted since the last call, in order. */
    public List<KvEvent> drainEvents() {
        return events.drain();
    }

    public boolean hasPendingEvents() {
        return !events.isEmpty();
    }

    /** Checks the state invariants in O(total); throws {@link IllegalStateException} on the first breach. */
    public void verifyInvariants() {
        int a = 0;
        int c = 0;
        int r = 0;
        for (int slot = 0; slot < total; slot++) {
            if (refCount[slot] < 0) {
                throw new IllegalStateException("negative refcount at slot " + slot);
            }
            a += refCount[slot] > 0 ? 1 : 0;
            c += refCount[slot] == 0 && registered[slot] ? 1 : 0;
            if (registered[slot]) {
                r++;
                if (index.get(seqHash[slot]) != slot) {
                    throw new IllegalStateException("index does not map slot " + slot + "'s seq hash to it");
                }
            }
        }
        int lruLength = 0;
        for (int s = lruHead; s != NIL; s = lruNext[s]) {
            lruLength++;
        }
        if (a != active || c != cached || c != lruLength || r != index.size() || freeTop + a + c != total) {
            throw new IllegalStateException("counts disagree: active " + a + "/" + active + ", cached " + c + "/"
                    + cached + " (lru " + lruLength + "), registered " + r + "/" + index.size() + ", free "
                    + freeTop + ", total " + total);
        }
    }

    private void unregister(int slot) {
        registered[slot] = false;
        index.remove(seqHash[slot]);
    }

    private void appendLru(int slot) {
        lruPrev[slot] = lruTail;
        lruNext[slot] = NIL;
        if (lruTail == NIL) {
            lruHead = slot;
        } else {
            lruNext[lruTail] = slot;
        }
        lruTail = slot;
        cached++;
    }

    private void unlinkLru(int slot) {
        int p = lruPrev[slot];
        int n = lruNext[slot];
        if (p == NIL) {
            lruHead = n;
        } else {
            lruNext[p] = n;
        }
        if (n == NIL) {
            lruTail = p;
        } else {
            lruPrev[n] = p;
        }
        lruPrev[slot] = NIL;
        lruNext[slot] = NIL;
        cached--;
    }
}
