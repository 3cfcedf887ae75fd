package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.PrefillSink;
import io.flotilla.worker.engine.RequestCancelledException;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.TokenSink;

/**
 * The {@link Scheduler}'s side of KV handoffs: prefill-only requests, block imports and
 * continuations. Same contract as the scheduler: single-threaded, callers serialise every call
 * (the {@link SimulatedEngine} lock), and each call that changes the resident set flushes one
 * KV event batch.
 */
final class KvExchange {

    private final Scheduler s;

    KvExchange(Scheduler scheduler) {
        this.s = scheduler;
    }

    /** The pool's payload store, or null when payloads are disabled. */
    KvPayloadStore payloads() {
        return s.pool().payloads();
    }

    /**
     * Queues a prefill-only request: one token is sampled as {@link Scheduler#submit} would, then the prompt's
     * full blocks are pinned and handed to {@code sink} (cancel before that: {@code onError}).
     */
    RequestHandle submitPrefill(EngineRequest request, PrefillSink sink) {
        if (s.pool().payloads() == null) {
            throw new EngineUnavailableException("KV payloads are disabled on this engine; it cannot hand KV off");
        }
        EngineRequest one = new EngineRequest(request.requestId(), request.promptTokens(), 1, request.stopTokenIds(),
                true, request.temperature(), request.seed(), request.deadline(), request.options(), request.scope());
        s.checkAdmissible(one);
        Sequence seq = s.sequence(one, new PrefillTokens(sink), TokenSampler.streamSeed(request, s.config().seed()));
        seq.prefillSink = sink;
        return s.enqueue(seq);
    }

    /**
     * Queues the continuation of a request whose first token was sampled elsewhere from stream
     * {@code rngState}; see {@link io.flotilla.worker.engine.KvTransferSupport#submitContinuation}.
     * {@code imported} (committed, or null) is taken over only when this returns normally.
     */
    RequestHandle submitContinuation(EngineRequest request, int firstToken, long rngState, BlockImport imported,
                                     TokenSink sink) {
        s.checkAdmissible(request);
        if (firstToken < 0 || firstToken >= s.config().vocabSize()) {
            throw new InvalidRequestException("first token " + firstToken + " is outside the vocabulary");
        }
        if (imported != null && imported.state() != BlockImport.State.COMMITTED) {
            throw new IllegalArgumentException("the block import is not committed");
        }
        Sequence seq = s.sequence(request, sink, rngState);
        seq.continueFrom(firstToken);
        seq.emitTokens(new int[] {firstToken});
        FinishReason reason = s.finishReason(seq, firstToken);
        if (reason != null || seq.sinkFailed) {
            if (imported != null) {
                imported.release(s.pool());
            }
            seq.state = Sequence.State.FINISHED;
            seq.cachedTokens = imported == null ? 0 : imported.residentTokens();
            seq.emitFinish(reason == null ? FinishReason.FINISH_REASON_CANCELLED : reason);
            return s.new Handle(seq);
        }
        if (imported != null) {
            seq.cachedTokens = imported.residentTokens();
            imported.handTo(seq); // held while waiting; admission swaps them for its own references
        }
        return s.enqueue(seq);
    }

    /** Holds pool room for importing the first {@code blocks} full blocks of {@code tokens}, hashed in {@code scope}. */
    BlockImport beginImport(int[] tokens, io.flotilla.protocol.hash.KvScope scope, int blocks) {
        if (s.pool().payloads() == null) {
            throw new EngineUnavailableException("KV payloads are disabled on this engine; it cannot import KV");
        }
        if (blocks < 0 || (long) blocks * s.config().blockSize() > tokens.length) {
            throw new InvalidRequestException(blocks + " blocks do not fit a prompt of " + tokens.length + " tokens");
        }
        try {
            return BlockImport.reserve(s.pool(), s.scoped(scope), tokens, blocks);
        } finally {
            s.flushEvents(); // evictions
        }
    }

    /** Registers an import's fetched blocks, emitting their {@code BlockStored} events. */
    void commitImport(BlockImport imported) {
        imported.commit(s.pool());
        s.flushEvents();
    }

    /** Releases whatever an import still holds. */
    void abortImport(BlockImport imported) {
        imported.release(s.pool());
        s.flushEvents();
    }

    /** A prefill-only sequence's token side: tokens are not streamed; a cancel is an error. */
    private record PrefillTokens(PrefillSink sink) implements TokenSink {
        @Override
        public void onTokens(int[] tokens) {
        }

        @Override
        public void onFinish(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens) {
            sink.onError(new RequestCancelledException("prefill cancelled"));
        }

        @Override
        public void onError(Throwable error) {
            sink.onError(error);
        }
    }
}
