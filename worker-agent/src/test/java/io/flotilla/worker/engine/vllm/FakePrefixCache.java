package io.flotilla.worker.engine.vllm;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.flotilla.worker.engine.vllm.MsgspecWire.u64;

/**
 * The prefix cache of a fake engine (vLLM's block pool, SGLang's paged radix cache): full blocks of a
 * prompt keyed by (parent engine hash, tokens), fresh seeded 64-bit engine hashes for new ones (often
 * ≥ 2^63, like real per-process hashes), nothing ever evicted. Not thread-safe: the fakes synchronize.
 */
public final class FakePrefixCache {

    /**
     * What caching one prompt did.
     *
     * @param hitBlocks   leading full blocks that were cached already
     * @param stored      engine hashes of the blocks cached now (as msgpack uint64 values), in prefix order
     * @param parent      engine hash of the block before the first stored one (msgpack uint64), or null for a root
     * @param tokens      the tokens of the stored blocks
     */
    public record Admission(int hitBlocks, List<Object> stored, Object parent, int[] tokens) {
    }

    private record BlockKey(Long parent, List<Integer> tokens) {
    }

    private final int blockSize;
    private final Random hashes;
    private final Map<BlockKey, Long> cached = new HashMap<>();

    public FakePrefixCache(int blockSize, long seed) {
        this.blockSize = blockSize;
        this.hashes = new Random(seed);
    }

    public Admission admit(int[] prompt) {
        int full = prompt.length / blockSize;
        Long parent = null;
        int hit = 0;
        while (hit < full) {
            Long h = cached.get(key(parent, prompt, hit));
            if (h == null) {
                break;
            }
            parent = h;
            hit++;
        }
        Object firstParent = parent == null ? null : u64(parent);
        List<Object> stored = new ArrayList<>();
        for (int b = hit; b < full; b++) {
            long h = hashes.nextLong();
            cached.put(key(parent, prompt, b), h);
            stored.add(u64(h));
            parent = h;
        }
        return new Admission(hit, stored, firstParent, Arrays.copyOfRange(prompt, hit * blockSize, full * blockSize));
    }

    private BlockKey key(Long parent, int[] prompt, int block) {
        List<Integer> tokens = new ArrayList<>(blockSize);
        for (int i = block * blockSize; i < (block + 1) * blockSize; i++) {
            tokens.add(prompt[i]);
        }
        return new BlockKey(parent, tokens);
    }
}
