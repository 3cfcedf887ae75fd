package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.KvBlockRef;
import io.flotilla.worker.engine.KvPin;
import io.flotilla.worker.engine.PrefilledKv;

import java.util.ArrayList;
import java.util.List;

/**
 * One extra reference on each full prompt block of a finished prefill-only sequence, so the blocks
 * stay resident and unchanged (a referenced registered slot is never evicted or rewritten) until a
 * decoder pulled them. Not thread-safe: callers serialise {@link #release()} with the scheduler.
 */
final class PromptPin implements KvPin {

    private final BlockPool pool;
    private final int[] slots;
    private boolean released;

    private PromptPin(BlockPool pool, int[] slots) {
        this.pool = pool;
        this.slots = slots;
    }

    /** Pins {@code seq}'s full prompt blocks (all registered once its prefill completed) and describes them. */
    static PrefilledKv pin(Sequence seq, BlockPool pool, int blockSize) {
        int blocks = seq.promptLength / blockSize;
        int[] slots = new int[blocks];
        List<KvBlockRef> refs = new ArrayList<>(blocks);
        for (int b = 0; b < blocks; b++) {
            int slot = seq.slot(b);
            pool.retain(slot);
            slots[b] = slot;
            refs.add(pool.payloads().locate(slot, seq.seqHash(b)));
        }
        return new PrefilledKv(seq.id, seq.tokenAt(seq.promptLength), seq.streamSeed, seq.promptLength,
                Math.max(0, seq.cachedTokens), refs, new PromptPin(pool, slots));
    }

    @Override
    public void release() {
        if (!released) {
            released = true;
            for (int b = slots.length - 1; b >= 0; b--) {
                pool.release(slots[b]);
            }
        }
    }

    @Override
    public boolean released() {
        return released;
    }
}
