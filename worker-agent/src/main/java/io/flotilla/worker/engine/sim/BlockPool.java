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
 *   <li><b>cached</b>: refcount 0, registered, resident, on the LRU list (head = least recent);</li>
 *   <li><b>held for a copy</b>: refcount 0, registered, resident, but off the LRU list while a lower KV
 *       tier copies its bytes ({@link #holdForCopy}); it cannot be evicted until {@link #copyDone}.</li>
 * </ul>
 * Invariants: free + active + cached + held == total; each registered seq_hash maps to exactly one slot;
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
    /** A lower tier is copying the slot's bytes: not evictable, not rewritten. */
    private final boolean[] copying;
    private int held;
    private int copyingCount;
    private RegistrationHook onRegistered;
    private final int[] freeStack;
    private int freeTop;
    private final int[] lruPrev;
    private final int[] lruNext;
    private int lruHead = NIL;
    private int lruTail = NIL;
    private int cached;
    private int active;
    private final SeqHashTable index;
    /** XOR of the registered seq hashes. */
    private long xor;
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
        this.copying = new boolean[totalBlocks];
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

    /** Sees every block that becomes resident with fresh bytes (not a dedup onto a resident slot). */
    @FunctionalInterface
    public interface RegistrationHook {
        void registered(int slot, long seqHash);
    }

    public int totalBlocks() { return total; }
    public int activeBlocks() { return active; }
    /** Unreferenced resident blocks that can be evicted now. */
    public int cachedBlocks() { return cached; }
    /** Unreferenced resident blocks held for a lower tier's copy. */
    public int heldBlocks() { return held; }
    /** Blocks a lower tier is copying now, referenced or not. */
    public int copyingBlocks() { return copyingCount; }
    public int freeBlocks() { return freeTop; }
    public int residentBlocks() { return index.size(); }

    /** Blocks an allocation could obtain now: free ones plus evictable cached ones. */
    public int availableBlocks() { return freeTop + cached; }

    public int refCount(int slot) { return refCount[slot]; }
    public boolean isRegistered(int slot) { return registered[slot]; }
    /** Registered, unreferenced and evictable (on the LRU list). */
    public boolean isCached(int slot) { return registered[slot] && refCount[slot] == 0 && !copying[slot]; }

    /** Sets the one hook that sees fresh registrations (the lower tiers' write-through); null: none. */
    public void setRegistrationHook(RegistrationHook hook) {
        this.onRegistered = hook;
    }

    /**
     * Keeps registered {@code slot}'s bytes in place while a lower tier copies them: until
     * {@link #copyDone} it is neither evicted nor rewritten, whatever its refcount does.
     */
    public void holdForCopy(int slot) {
        if (!registered[slot] || copying[slot]) {
            throw new IllegalStateException("slot " + slot + " is not a registered block free of copies");
        }
        if (refCount[slot] == 0) {
            unlinkLru(slot);
            held++;
        }
        copying[slot] = true;
        copyingCount++;
    }

    /** The copy of {@code slot} ended: an unreferenced block becomes cached (most recent) again. */
    public void copyDone(int slot) {
        if (!copying[slot]) {
            throw new IllegalStateException("slot " + slot + " is not held for a copy");
        }
        copying[slot] = false;
        copyingCount--;
        if (refCount[slot] == 0) {
            held--;
            appendLru(slot);
        }
    }

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
            if (copying[slot]) {
                held--;
            } else {
                unlinkLru(slot);
            }
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
            if (registered[slot] && copying[slot]) {
                held++;
            } else if (registered[slot]) {
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
        xor ^= hash;
        if (payloads != null && fillPattern) {
            payloads.fillPattern(slot, hash);
        }
        events.stored(parentHash, hash, localHash);
        if (onRegistered != null) {
            onRegistered.registered(slot, hash);
        }
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

    /** XOR of every resident block's seq hash. */
    public long residentXor() {
        return xor;
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

    /** The event buffer, for the lower tiers' events (same order, same batches). */
    KvEventBuffer events() {
        return events;
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
        int h = 0;
        int r = 0;
        for (int slot = 0; slot < total; slot++) {
            if (refCount[slot] < 0) {
                throw new IllegalStateException("negative refcount at slot " + slot);
            }
            if (copying[slot] && !registered[slot]) {
                throw new IllegalStateException("slot " + slot + " is held for a copy but not registered");
            }
            a += refCount[slot] > 0 ? 1 : 0;
            c += refCount[slot] == 0 && registered[slot] && !copying[slot] ? 1 : 0;
            h += refCount[slot] == 0 && copying[slot] ? 1 : 0;
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
        if (a != active || c != cached || h != held || c != lruLength || r != index.size()
                || freeTop + a + c + h != total) {
            throw new IllegalStateException("counts disagree: active " + a + "/" + active + ", cached " + c + "/"
                    + cached + " (lru " + lruLength + "), held " + h + "/" + held + ", registered " + r + "/"
                    + index.size() + ", free " + freeTop + ", total " + total);
        }
    }

    private void unregister(int slot) {
        registered[slot] = false;
        index.remove(seqHash[slot]);
        xor ^= seqHash[slot];
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
