package io.flotilla.worker.engine.llamacpp;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.v1.BlockRemoved;
import io.flotilla.protocol.v1.BlockStored;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.StoredBlock;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What llama.cpp holds in each of its slots, kept by the worker because the engine publishes no KV events. Every
 * request is pinned to a slot, so the mirror knows each slot's tokens: the prompt it was given and, after it, the
 * generated tokens the engine decoded (all but the last one sampled). The engine's reuse rule is its prompt cache:
 * a new prompt keeps the longest common prefix with what the slot holds, less one token when the whole prompt
 * matches (one token is always evaluated), and drops the rest.
 *
 * <p>The slots' full blocks, hashed as the gateway hashes them, are the worker's resident set; a block two slots
 * hold counts once. Each change returns the Flotilla KV events that take the resident set from before to after:
 * a block is stored when its first holder takes it and removed when its last holder drops it, stored runs in
 * prefix order with their parent. Not thread-safe: the engine calls it under its lock.
 */
final class CacheMirror {

    private final BlockHasher hasher;
    private final int[][] tokens;
    private final long[][] seqHashes;
    private final long[][] localHashes;
    private final Map<Long, Integer> holders = new HashMap<>();

    CacheMirror(int slots, BlockHasher hasher) {
        this.hasher = hasher;
        this.tokens = new int[slots][0];
        this.seqHashes = new long[slots][0];
        this.localHashes = new long[slots][0];
    }

    int slots() {
        return tokens.length;
    }

    /** How many tokens slot {@code slot} holds now. */
    int length(int slot) {
        return tokens[slot].length;
    }

    /** Prompt tokens the engine will take from {@code slot}'s cache for {@code prompt} (its prompt-cache rule). */
    int reuse(int slot, int[] prompt) {
        int common = commonPrefix(tokens[slot], prompt);
        return prompt.length > 0 && common >= prompt.length ? prompt.length - 1 : common;
    }

    /** The slot among {@code idle} whose cache serves most of {@code prompt}; ties go to the first listed. */
    int best(int[] idle, int[] prompt) {
        int best = idle[0];
        int most = -1;
        for (int slot : idle) {
            int r = reuse(slot, prompt);
            if (r > most) {
                most = r;
                best = slot;
            }
        }
        return best;
    }

    /**
     * Slot {@code slot} now holds {@code held}: a new prompt starts there (the slot keeps the common prefix and
     * evaluates the rest), or a finished request's prompt and decoded output stay. Returns the events of the change.
     */
    List<KvEvent> hold(int slot, int[] held) {
        long[] before = seqHashes[slot];
        long[] local = hasher.localHashes(held);
        long[] after = hasher.seqHashesFromLocal(local);
        tokens[slot] = held.clone();
        seqHashes[slot] = after;
        localHashes[slot] = local;
        int kept = 0;
        while (kept < before.length && kept < after.length && before[kept] == after[kept]) {
            kept++;
        }
        List<KvEvent> events = new ArrayList<>();
        List<Long> removed = new ArrayList<>();
        for (int i = kept; i < before.length; i++) {
            if (holders.merge(before[i], -1, Integer::sum) == 0) {
                holders.remove(before[i]);
                removed.add(before[i]);
            }
        }
        if (!removed.isEmpty()) {
            events.add(KvEvent.newBuilder().setRemoved(BlockRemoved.newBuilder().addAllSeqHashes(removed)).build());
        }
        BlockStored.Builder run = null;
        for (int i = kept; i < after.length; i++) {
            boolean fresh = holders.merge(after[i], 1, Integer::sum) == 1;
            if (fresh) {
                if (run == null) {
                    run = BlockStored.newBuilder().setParentSeqHash(i == 0 ? 0 : after[i - 1]);
                }
                run.addBlocks(StoredBlock.newBuilder().setSeqHash(after[i]).setLocalHash(local[i]));
            } else if (run != null) {
                events.add(KvEvent.newBuilder().setStored(run).build());
                run = null;
            }
        }
        if (run != null) {
            events.add(KvEvent.newBuilder().setStored(run).build());
        }
        return events;
    }

    /** Every block some slot holds. */
    long[] resident() {
        return holders.keySet().stream().mapToLong(Long::longValue).toArray();
    }

    /** Full blocks held by slot {@code slot}. */
    int blocks(int slot) {
        return seqHashes[slot].length;
    }

    static int commonPrefix(int[] a, int[] b) {
        int n = Math.min(a.length, b.length);
        int mismatch = Arrays.mismatch(a, 0, n, b, 0, n);
        return mismatch < 0 ? n : mismatch;
    }
}
