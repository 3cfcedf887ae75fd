package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.hash.KvScope;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.KvBlockRef;
import io.flotilla.worker.engine.KvImport;
import io.flotilla.worker.engine.KvMemory;
import io.flotilla.worker.engine.KvPin;
import io.flotilla.worker.engine.KvTransferSupport;
import io.flotilla.worker.engine.PrefillSink;
import io.flotilla.worker.engine.PrefilledKv;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.TokenSink;

import java.util.List;

/**
 * {@link KvTransferSupport} of the {@link SimulatedEngine}: every call takes the engine lock, so
 * pins and imports handed out here are safe to use from any thread.
 */
final class SimKvTransfer implements KvTransferSupport {

    private final SimulatedEngine engine;

    SimKvTransfer(SimulatedEngine engine) {
        this.engine = engine;
    }

    @Override
    public void useKvMemory(KvMemory memory) {
        engine.withExchange(x -> {
            x.payloads().useMemory(memory);
            return null;
        });
    }

    @Override
    public int kvBytesPerBlock() {
        return engine.config().kvBytesPerBlock();
    }

    @Override
    public RequestHandle prefill(EngineRequest request, PrefillSink sink) {
        return engine.submitExchange(x -> x.submitPrefill(request, new LockedPins(engine.deferred(sink))));
    }

    @Override
    public KvImport beginImport(int[] promptTokens, KvScope scope, int blocks) {
        return new LockedImport(engine.withExchange(x -> x.beginImport(promptTokens, scope, blocks)));
    }

    @Override
    public RequestHandle submitContinuation(EngineRequest request, int firstToken, long rngState, KvImport imported,
                                            TokenSink sink) {
        BlockImport blocks = null;
        if (imported != null) {
            if (!(imported instanceof LockedImport li)) {
                throw new IllegalArgumentException("not an import of this engine");
            }
            blocks = li.blocks;
        }
        BlockImport b = blocks;
        return engine.submitDeferred(sink, deferred -> engine.withExchange(
                x -> x.submitContinuation(request, firstToken, rngState, b, deferred)));
    }

    /** Hands prefill results on with a pin that takes the engine lock. */
    private final class LockedPins implements PrefillSink {
        private final PrefillSink inner;

        LockedPins(PrefillSink inner) {
            this.inner = inner;
        }

        @Override
        public void onPrefilled(PrefilledKv kv) {
            inner.onPrefilled(new PrefilledKv(kv.requestId(), kv.firstToken(), kv.rngState(), kv.promptTokens(),
                    kv.cachedTokens(), kv.blocks(), new LockedPin(kv.pin())));
        }

        @Override
        public void onError(Throwable error) {
            inner.onError(error);
        }
    }

    private final class LockedPin implements KvPin {
        private final KvPin inner;

        LockedPin(KvPin inner) {
            this.inner = inner;
        }

        @Override
        public void release() {
            engine.withScheduler(s -> {
                inner.release();
                return null;
            });
        }

        @Override
        public boolean released() {
            return engine.withScheduler(s -> inner.released());
        }
    }

    private final class LockedImport implements KvImport {
        private final BlockImport blocks;

        LockedImport(BlockImport blocks) {
            this.blocks = blocks;
        }

        @Override
        public long[] seqHashes() {
            return blocks.seqHashes();
        }

        @Override
        public List<KvBlockRef> toFetch() {
            return engine.withExchange(x -> blocks.toFetch(x.payloads()));
        }

        @Override
        public int residentTokens() {
            return blocks.residentTokens();
        }

        @Override
        public int firstCorruptBlock() {
            return engine.withExchange(x -> blocks.firstCorruptBlock(x.payloads()));
        }

        @Override
        public void commit() {
            engine.withExchange(x -> {
                x.commitImport(blocks);
                return null;
            });
        }

        @Override
        public void abort() {
            engine.withScheduler(s -> { // also after close: only references move, no byte is touched
                engine.exchange().abortImport(blocks);
                return null;
            });
        }
    }
}
