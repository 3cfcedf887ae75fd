package io.flotilla.worker.engine.vllm;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.worker.engine.KvEventListener;
import io.flotilla.worker.engine.ResidentBlocks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * The Engine-side view of an external engine's KV events: translated batches go to the
 * {@link KvEventListener} at positions 1, 2, 3, … (one per batch that changed the Flotilla view;
 * engine batches that translate to nothing use no position), and {@link #residentBlocks()} is
 * taken under the same lock, so its position always names the last batch its set includes.
 *
 * <p>Fed by one event thread ({@link VllmKvEventSubscriber}); {@link #residentBlocks()} may be
 * called from any thread.
 */
public final class VllmKvEventFeed {

    private static final Logger log = LoggerFactory.getLogger(VllmKvEventFeed.class);

    private final KvEventTranslator translator;
    private final KvEventCounters counters;
    private final KvEventListener listener;
    private long position;

    /** @param listener receives every translated batch, numbered from 1 */
    public VllmKvEventFeed(BlockHasher hasher, KvEventCounters counters, int forgottenCapacity, KvEventListener listener) {
        this.translator = new KvEventTranslator(hasher, counters, forgottenCapacity);
        this.counters = counters;
        this.listener = listener;
    }

    public KvEventCounters counters() {
        return counters;
    }

    /** Applies one engine batch, in engine sequence order. */
    public synchronized void apply(VllmEventBatch batch) {
        counters.batches.increment();
        deliver(translator.translate(batch));
    }

    /** Engine batches were lost for good: forget the resident view (see {@link KvEventTranslator#resync()}). */
    public synchronized void resync() {
        deliver(translator.resync());
    }

    /** The engine process changed: forget everything known about it. */
    public synchronized void engineRestarted() {
        counters.engineRestarts.increment();
        deliver(translator.reset());
    }

    /** See {@link KvEventTranslator#saltsVisible()}. */
    public boolean saltsVisible() {
        return translator.saltsVisible();
    }

    /** See {@link KvEventTranslator#saltedRequestSent()}. */
    public void saltedRequestSent() {
        translator.saltedRequestSent();
    }

    /** The translated resident set and the position of the last batch it includes. */
    public synchronized ResidentBlocks residentBlocks() {
        return new ResidentBlocks(position, translator.residentSeqHashes(),
                translator.residentSeqHashes(io.flotilla.protocol.v1.KvTier.KV_TIER_HOST),
                translator.residentSeqHashes(io.flotilla.protocol.v1.KvTier.KV_TIER_DISK));
    }

    /** Position of the last delivered batch (0: none). */
    public synchronized long position() {
        return position;
    }

    private void deliver(List<KvEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        position++;
        try {
            listener.onEvents(position, List.copyOf(events));
        } catch (RuntimeException e) { // the listener's failure must not stop the event thread
            log.warn("KV event listener failed on batch {}: {}", position, e.toString());
        }
    }
}
