package io.flotilla.worker.engine.vllm;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.AllBlocksCleared;
import io.flotilla.protocol.v1.BlockRemoved;
import io.flotilla.protocol.v1.BlockStored;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.StoredBlock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns one engine's KV events into Flotilla KV events, and keeps the translated resident set.
 *
 * <p>Engine block hashes are per-process values (vLLM seeds them from {@code PYTHONHASHSEED} unless a
 * CBOR hash is pinned), so they are never published. Flotilla identity is recomputed with
 * {@link BlockHasher} from the token ids every {@code BlockStored} carries, chained from the parent's
 * Flotilla seq hash; a mapping engine hash → (seq hash, local hash) lets removals translate.
 *
 * <p>Cache scopes (adapter, tenant salt; protocol/README.md "Block identity"). vLLM hashes an adapter's
 * blocks with its name and a salted request's first block with its {@code cache_salt}, every later block
 * chaining from it; its events carry {@code lora_name} and, per block, the {@code extra_keys} it hashed with.
 * A root block is translated in the namespace of its adapter and of the salt among its first block's extra
 * keys; a child in its parent's namespace. So every published seq hash is in the scope the gateway hashed
 * the request in (vLLM salts every block: gateways send no public prefix to such workers). An event without
 * {@code extra_keys} (older vLLM) cannot tell a salted root from a shared one: the translator then reports
 * {@link #saltsVisible()} false (the worker refuses salted requests from then on) and, once a salted
 * request was sent ({@link #saltedRequestSent()}), leaves such roots out rather than guess.
 *
 * <p>Invariants:
 * <ul>
 *   <li>The events returned so far, replayed over an empty set per tier, give exactly
 *       {@link #residentSeqHashes(KvTier)} for each tier: a Flotilla {@code Stored} of a tier is emitted
 *       when a seq hash goes from no engine copy on that tier's medium to one, a {@code Removed} when
 *       its last copy there goes (vLLM may cache the same hash twice, and on several media: its CPU
 *       offloading connector and LMCache report {@code medium = "CPU"}, which is the host tier).</li>
 *   <li>A block that cannot be translated (LoRA, block size or token count mismatch, unknown parent,
 *       engine hash reused for other tokens) is left out and counted: the view may miss blocks the
 *       engine holds, never claim blocks it does not.</li>
 * </ul>
 * Not thread-safe: one event thread owns it.
 */
public final class KvEventTranslator {

    /** One engine hash's translation, the namespace it was hashed in, and how many engine copies hold it. */
    private static final class Entry {
        final long seqHash;
        final long localHash;
        final BlockHasher hasher;
        int copies = 1;

        Entry(long seqHash, long localHash, BlockHasher hasher) {
            this.seqHash = seqHash;
            this.localHash = localHash;
            this.hasher = hasher;
        }
    }

    private static final int SCOPES = 1024;

    private final BlockHasher hasher;
    /** Hashers of the (adapter, salt) namespaces seen lately; the base namespace is {@link #hasher}. */
    private final LinkedHashMap<String, BlockHasher> scopes = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, BlockHasher> eldest) {
            return size() > SCOPES;
        }
    };
    private volatile boolean saltsVisible = true;
    private volatile boolean saltedRequestSent;
    private final KvEventCounters counters;
    private final Map<Long, Entry> live = new HashMap<>();
    /** Per tier (index = KvTier number): seq hash → engine copies on that tier's media. */
    @SuppressWarnings("unchecked")
    private final Map<Long, Integer>[] resident = new Map[] {new HashMap<>(), new HashMap<>(), new HashMap<>(),
            new HashMap<>()};
    /** Translations of engine hashes no longer resident, kept so children stored later still chain. */
    private final LinkedHashMap<Long, Entry> forgotten;

    /**
     * @param forgottenCapacity how many translations of evicted blocks to keep for parent look-ups
     */
    public KvEventTranslator(BlockHasher hasher, KvEventCounters counters, int forgottenCapacity) {
        this.hasher = hasher;
        this.counters = counters;
        this.forgotten = new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, KvEventTranslator.Entry> eldest) {
                return size() > forgottenCapacity;
            }
        };
    }

    /**
     * False once the engine sent a stored block without {@code extra_keys}: its events cannot tell which
     * tenant's salt a block was hashed with, so tenant-salted requests must not be sent to it.
     */
    public boolean saltsVisible() {
        return saltsVisible;
    }

    /** A tenant-salted request went to the engine: from now on a root block of unknown scope is left out. */
    public void saltedRequestSent() {
        saltedRequestSent = true;
    }

    /** The Flotilla events for one engine batch, in engine order; empty when nothing visible changed. */
    public List<KvEvent> translate(VllmEventBatch batch) {
        List<KvEvent> out = new ArrayList<>();
        for (VllmKvEvent e : batch.events()) {
            if (e instanceof VllmKvEvent.BlockStored s) {
                stored(s, out);
            } else if (e instanceof VllmKvEvent.BlockRemoved r) {
                removed(r, out);
            } else if (e instanceof VllmKvEvent.AllBlocksCleared) {
                forgetResidency();
                out.add(cleared());
            } else {
                counters.unknownEventTypes.increment();
            }
        }
        return out;
    }

    /**
     * Events were lost for good: drops the resident view (the engine may have evicted anything in
     * the meantime) but keeps translations for parent look-ups, since engine hashes stay valid
     * within one engine process.
     *
     * @return {@code AllBlocksCleared} when anything was resident, else nothing
     */
    public List<KvEvent> resync() {
        boolean had = residentCount() + residentCount(KvTier.KV_TIER_HOST) + residentCount(KvTier.KV_TIER_DISK) > 0;
        forgetResidency();
        return had ? List.of(cleared()) : List.of();
    }

    /** The engine process changed: its hashes mean nothing any more. Same result as {@link #resync()}. */
    public List<KvEvent> reset() {
        List<KvEvent> out = resync();
        forgotten.clear();
        return out;
    }

    /** Flotilla seq hashes of the translated resident set on the device (GPU). */
    public long[] residentSeqHashes() {
        return residentSeqHashes(KvTier.KV_TIER_DEVICE);
    }

    /** Flotilla seq hashes the engine holds on {@code tier}'s media. */
    public long[] residentSeqHashes(KvTier tier) {
        Map<Long, Integer> set = resident[tier.getNumber()];
        long[] out = new long[set.size()];
        int i = 0;
        for (long h : set.keySet()) {
            out[i++] = h;
        }
        return out;
    }

    public int residentCount() {
        return residentCount(KvTier.KV_TIER_DEVICE);
    }

    public int residentCount(KvTier tier) {
        return resident[tier.getNumber()].size();
    }

    private void stored(VllmKvEvent.BlockStored s, List<KvEvent> out) {
        long[] engineHashes = s.blockHashes();
        int n = engineHashes.length;
        int blockSize = hasher.blockSize();
        if (n == 0) {
            return;
        }
        if (s.loraId() != null && s.loraName() == null) {
            counters.loraBlocks.add(n);
            return;
        }
        if (s.blockSize() != blockSize) {
            counters.blockSizeMismatch.add(n);
            return;
        }
        if (s.tokenIds().length != n * blockSize) {
            counters.missingTokens.add(n);
            return;
        }
        boolean root = s.parentBlockHash() == null;
        long prev = 0;
        String lora = s.loraName() == null ? "" : s.loraName();
        BlockHasher scoped;
        if (root) {
            scoped = rootScope(s, lora);
            if (scoped == null) {
                counters.unscopedBlocks.add(n);
                return;
            }
        } else {
            Entry parent = lookup(s.parentBlockHash());
            if (parent == null) {
                counters.unknownParent.add(n);
                return;
            }
            if (!parent.hasher.namespace().loraName().equals(lora)) {
                counters.unscopedBlocks.add(n);
                return;
            }
            prev = parent.seqHash;
            scoped = parent.hasher;
        }
        KvTier tier = tier(s.medium());
        BlockStored.Builder group = null;
        for (int i = 0; i < n; i++) {
            if (s.keysOf(i).opaque()) { // multimodal ids or embeddings: the tokens alone do not name the block
                counters.opaqueKeyBlocks.add(n - i);
                break;
            }
            long local = scoped.localHash(s.tokenIds(), i);
            long seq = i == 0 && root ? local : scoped.chain(prev, local);
            if (hold(engineHashes[i], seq, local, scoped) && addResident(tier, seq)) {
                if (group == null) {
                    group = BlockStored.newBuilder().setParentSeqHash(i == 0 && root ? 0 : prev).setTier(tier);
                }
                group.addBlocks(StoredBlock.newBuilder().setSeqHash(seq).setLocalHash(local));
            } else if (group != null) {
                out.add(KvEvent.newBuilder().setStored(group).build());
                group = null;
            }
            prev = seq;
        }
        if (group != null) {
            out.add(KvEvent.newBuilder().setStored(group).build());
        }
    }

    private void removed(VllmKvEvent.BlockRemoved r, List<KvEvent> out) {
        KvTier tier = tier(r.medium());
        BlockRemoved.Builder gone = null;
        for (long h : r.blockHashes()) {
            Entry e = live.get(h);
            if (e == null) {
                counters.unknownRemoved.increment();
                continue;
            }
            if (--e.copies == 0) {
                live.remove(h);
                forgotten.put(h, e);
            }
            if (removeResident(tier, e.seqHash)) {
                if (gone == null) {
                    gone = BlockRemoved.newBuilder().setTier(tier);
                }
                gone.addSeqHashes(e.seqHash);
            }
        }
        if (gone != null) {
            out.add(KvEvent.newBuilder().setRemoved(gone).build());
        }
    }

    /**
     * The namespace of a root block: its adapter's, salted with the string among its first block's extra keys
     * that is not the adapter name (vLLM puts the adapter name first and the request's cache_salt after any
     * multimodal keys). Null when the event cannot tell.
     */
    private BlockHasher rootScope(VllmKvEvent.BlockStored s, String lora) {
        if (s.extraKeys() == null) {
            saltsVisible = false;
            return saltedRequestSent ? null : scope(lora, "");
        }
        List<String> keys = s.keysOf(0).strings();
        int from = !lora.isEmpty() && !keys.isEmpty() && keys.get(0).equals(lora) ? 1 : 0;
        if (keys.size() - from > 1) {
            return null;
        }
        return scope(lora, keys.size() > from ? keys.get(from) : "");
    }

    private BlockHasher scope(String lora, String salt) {
        if (lora.isEmpty() && salt.isEmpty()) {
            return hasher;
        }
        return scopes.computeIfAbsent(lora + "\0" + salt, k -> {
            KvNamespace ns = hasher.namespace().withLoraName(lora).withTenantSalt(salt);
            return new BlockHasher(ns, hasher.blockSize());
        });
    }

    /** Records one more engine copy of {@code engineHash}; false when the hash stands for other tokens. */
    private boolean hold(long engineHash, long seq, long local, BlockHasher scoped) {
        Entry e = live.get(engineHash);
        if (e == null) {
            forgotten.remove(engineHash);
            live.put(engineHash, new Entry(seq, local, scoped));
            return true;
        }
        if (e.seqHash != seq) {
            counters.hashConflicts.increment();
            return false;
        }
        e.copies++;
        return true;
    }

    private Entry lookup(long engineHash) {
        Entry e = live.get(engineHash);
        return e != null ? e : forgotten.get(engineHash);
    }

    /** @return true when the seq hash was not on {@code tier} before */
    private boolean addResident(KvTier tier, long seq) {
        return resident[tier.getNumber()].merge(seq, 1, Integer::sum) == 1;
    }

    /** @return true when the last copy of the seq hash left {@code tier} */
    private boolean removeResident(KvTier tier, long seq) {
        Map<Long, Integer> set = resident[tier.getNumber()];
        Integer copies = set.get(seq);
        if (copies == null) {
            return false;
        }
        if (copies == 1) {
            set.remove(seq);
            return true;
        }
        set.put(seq, copies - 1);
        return false;
    }

    private void forgetResidency() {
        forgotten.putAll(live);
        live.clear();
        for (Map<Long, Integer> set : resident) {
            set.clear();
        }
    }

    private static KvEvent cleared() {
        return KvEvent.newBuilder().setCleared(AllBlocksCleared.getDefaultInstance()).build();
    }

    /**
     * Medium names: none or "GPU" for device memory; "CPU" (vLLM's offloading connector's
     * {@code CPULoadStoreSpec}, LMCache's local CPU backend) or "CPU_PINNED" (SGLang's host tier) for host
     * memory; anything else (a file system, shared storage, LMCache's disk backend) is a disk-like tier.
     */
    static KvTier tier(String medium) {
        if (medium == null || medium.equalsIgnoreCase(VllmKvEvent.MEDIUM_GPU)) {
            return KvTier.KV_TIER_DEVICE;
        }
        return medium.toUpperCase(java.util.Locale.ROOT).startsWith("CPU") ? KvTier.KV_TIER_HOST : KvTier.KV_TIER_DISK;
    }
}
