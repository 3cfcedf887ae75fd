package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.hash.ScopedHasher;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.PrefillSink;
import io.flotilla.worker.engine.PrefilledKv;
import io.flotilla.worker.engine.TokenLogprob;
import io.flotilla.worker.engine.TokenSink;

import java.util.Arrays;

/**
 * One request's mutable state inside the scheduler.
 *
 * <p>Tokens {@code [0, length)} are the prompt followed by generated tokens. KV is computed for
 * {@code [0, computed)}; when a step brings {@code computed} to {@code length} the engine samples
 * the next token. {@code slots[b]} holds block b of the computed tokens: blocks fully inside
 * {@code [0, computed)} are registered, a partial last block is not. Invariant while running:
 * {@code slotCount == ceil(computed / blockSize)}, except between scheduling and completing a
 * step, when slots for the planned tokens are already held.
 *
 * <p>Two variants for disaggregated serving: a <i>prefill-only</i> sequence ({@link #prefillSink} set)
 * ends after its first token by handing its pinned prompt blocks to that sink; a <i>continuation</i>
 * starts with its first token already generated elsewhere ({@link #continueFrom}) and, while it
 * waits, may hold references to imported prompt blocks, which admission releases and re-acquires.
 *
 * <p>Its blocks are hashed in its request's {@link io.flotilla.protocol.hash.KvScope} (adapter, tenant salt,
 * public prefix), so they match only blocks of the same scope.
 */
final class Sequence {

    private static final System.Logger LOG = System.getLogger(Sequence.class.getName());

    enum State { WAITING, RUNNING, FINISHED }

    final EngineRequest request;
    final String id;
    final int promptLength;
    final long streamSeed;
    final long deadlineMs;
    /** The LoRA adapter it runs on, "" for the base model. */
    final String adapter;
    private final TokenSink sink;
    private final ScopedHasher hasher;

    State state = State.WAITING;
    int[] tokens;
    int length;
    int computed;
    /** True once the current (initial or recompute) prefill is done and steps compute one token. */
    boolean decoding;
    int generated;
    /** Prompt tokens found resident at the first admission; -1 before it. */
    int cachedTokens = -1;
    /** The sink threw: the client is gone and the request must be dropped. */
    boolean sinkFailed;
    /** Set for a prefill-only sequence: it receives the pinned prompt instead of onFinish. */
    PrefillSink prefillSink;
    /**
     * Blocks being onboarded from lower KV tiers ({@link TierIntake}); while set, {@code computed} already
     * counts them (optimistically), no step completes work of the sequence and it is not scheduled again.
     * Cleared by completion, preemption and retirement.
     */
    TierIntake.Run onboarding;

    /** Draws this request's tokens; set before the sequence is queued. */
    TokenSampler sampler;
    private boolean terminated;

    private int[] slots = new int[4];
    private int slotCount;
    private long[] seqHashes = new long[0];
    private long[] localHashes = new long[0];
    private int hashedBlocks;

    Sequence(EngineRequest request, TokenSink sink, long streamSeed, ScopedHasher hasher) {
        this.request = request;
        this.id = request.requestId();
        this.adapter = request.scope().loraName();
        this.sink = sink;
        this.hasher = hasher;
        this.streamSeed = streamSeed;
        this.promptLength = request.promptTokens().length;
        this.deadlineMs = request.deadline() == null ? Long.MAX_VALUE : request.deadline().toEpochMilli();
        int room = (int) Math.min((long) promptLength + request.maxTokens(), promptLength + 64L);
        this.tokens = Arrays.copyOf(request.promptTokens(), room);
        this.length = promptLength;
    }

    int remaining() {
        return length - computed;
    }

    int slotCount() {
        return slotCount;
    }

    int slot(int block) {
        return slots[block];
    }

    void addSlot(int slot) {
        if (slotCount == slots.length) {
            slots = Arrays.copyOf(slots, slotCount * 2);
        }
        slots[slotCount++] = slot;
    }

    void replaceSlot(int block, int slot) {
        slots[block] = slot;
    }

    /** Releases every held block, last block first so a sequence's tail is evicted before its prefix. */
    void releaseBlocks(BlockPool pool) {
        truncateBlocks(0, pool);
    }

    /** Releases the blocks from {@code keep} on, last first. */
    void truncateBlocks(int keep, BlockPool pool) {
        for (int b = slotCount - 1; b >= keep; b--) {
            pool.release(slots[b]);
        }
        slotCount = Math.min(slotCount, keep);
    }

    /** Whether the sequence waits for onboarded KV to verify. */
    boolean awaitingKv() {
        return onboarding != null;
    }

    /** The token at position {@code i} (prompt, then generated tokens). */
    int tokenAt(int i) {
        return tokens[i];
    }

    /** Starts a continuation: {@code firstToken} counts as output token 0, already sent. */
    void continueFrom(int firstToken) {
        appendToken(firstToken);
    }

    void appendToken(int token) {
        if (length == tokens.length) {
            tokens = Arrays.copyOf(tokens, (int) Math.min((long) promptLength + request.maxTokens(), length * 2L));
        }
        tokens[length++] = token;
        generated++;
    }

    /** seq_hash of full token block {@code block} in the request's scope, computed on first use. */
    long seqHash(int block) {
        ensureHashed(block + 1);
        return seqHashes[block];
    }

    long localHash(int block) {
        ensureHashed(block + 1);
        return localHashes[block];
    }

    private void ensureHashed(int blocks) {
        if (blocks <= hashedBlocks) {
            return;
        }
        if (blocks * hasher.blockSize() > length) {
            throw new IllegalStateException("block " + (blocks - 1) + " of " + id + " is not full");
        }
        if (blocks > seqHashes.length) {
            int cap = Math.max(blocks, seqHashes.length * 2);
            seqHashes = Arrays.copyOf(seqHashes, cap);
            localHashes = Arrays.copyOf(localHashes, cap);
        }
        for (int b = hashedBlocks; b < blocks; b++) {
            long local = hasher.localHash(tokens, b);
            localHashes[b] = local;
            seqHashes[b] = hasher.seqHash(b == 0 ? 0 : seqHashes[b - 1], local, b);
        }
        hashedBlocks = blocks;
    }

    // Sink calls: at most one terminal call, nothing after it; a throwing sink marks the sequence failed.

    void emitTokens(int[] out) {
        emitTokens(out, null);
    }

    /** Tokens with their log-probabilities (null when the request did not ask for them). */
    void emitTokens(int[] out, TokenLogprob[] logprobs) {
        if (terminated) {
            return;
        }
        try {
            if (logprobs == null) {
                sink.onTokens(out);
            } else {
                sink.onTokens(out, logprobs);
            }
        } catch (RuntimeException e) {
            sinkFailed(e);
        }
    }

    void emitFinish(FinishReason reason) {
        if (terminated) {
            return;
        }
        terminated = true;
        try {
            sink.onFinish(reason, promptLength, Math.max(0, cachedTokens), generated);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "token sink of " + id + " failed in onFinish", e);
        }
    }

    /** A prefill-only sequence's result; when the sink is gone or throws, the pin is released. */
    void emitPrefilled(PrefilledKv kv) {
        if (terminated) {
            kv.pin().release();
            return;
        }
        terminated = true;
        try {
            prefillSink.onPrefilled(kv);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "prefill sink of " + id + " failed", e);
            kv.pin().release();
        }
    }

    void emitError(Throwable error) {
        if (terminated) {
            return;
        }
        terminated = true;
        try {
            sink.onError(error);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "token sink of " + id + " failed in onError", e);
        }
    }

    private void sinkFailed(RuntimeException e) {
        LOG.log(System.Logger.Level.DEBUG, "token sink of " + id + " failed; dropping the request", e);
        sinkFailed = true;
        terminated = true;
    }
}
