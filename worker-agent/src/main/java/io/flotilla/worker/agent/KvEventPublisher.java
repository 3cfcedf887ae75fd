package io.flotilla.worker.agent;

import io.flotilla.protocol.kafka.BoundedSender;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.worker.engine.KvEventListener;
import io.flotilla.worker.identity.WorkerIdentity;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Turns one engine's KV events into {@code flotilla.kv-events} batches keyed by worker id.
 *
 * <p>Batch {@code seq} is the engine's event position, so it grows by exactly one per batch and a
 * snapshot's position is directly comparable with it. The engine thread only enqueues; a sender
 * thread hands batches to the Kafka producer. That sender is the JVM's, shared by every worker in it
 * ({@link WorkerFleet}): a thread per worker that wakes to poll its queue costs a fleet of hundreds of
 * workers per JVM more than their idle engines do. When Kafka is slow or down the queue fills up to its
 * bound (shared too: all workers of a JVM share the producer, so they are slow together), after which
 * batches are dropped and counted per worker: the consumer sees a seq gap and repairs it from
 * {@code GetKvSnapshot}. Nothing here ever blocks the engine. Batches of one worker are sent in order.
 */
public final class KvEventPublisher implements KvEventListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KvEventPublisher.class);

    private final WorkerIdentity identity;
    private final Producer<String, Object> producer;
    private final Clock clock;
    private final BoundedSender<Runnable> sender;
    private final AtomicLong publishErrors = new AtomicLong();
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong sendFailures = new AtomicLong();

    /** @param sender runs each batch's send, in offer order; shared with the JVM's other workers, closed by its owner */
    public KvEventPublisher(WorkerIdentity identity, Producer<String, Object> producer, Clock clock,
                            BoundedSender<Runnable> sender) {
        this.identity = identity;
        this.producer = producer;
        this.clock = clock;
        this.sender = sender;
    }

    @Override
    public void onEvents(long position, List<KvEvent> events) {
        KvEventBatch batch = KvEventBatch.newBuilder()
                .setWorkerId(identity.id())
                .setEpoch(identity.epoch())
                .setSeq(position)
                .setTs(clock.millis())
                .setBlockSize(identity.blockSize())
                .setModel(identity.model())
                .addAllEvents(events)
                .build();
        if (!sender.offer(() -> send(batch))) {
            long n = dropped.incrementAndGet();
            if (Long.bitCount(n) == 1) {
                log.warn("{}: KV event buffer full ({} batches), dropping batch seq {} [{} dropped so far]; "
                        + "the indexer will repair the gap from a snapshot", identity.id(), sender.queued(), position, n);
            }
        }
    }

    /** Runs on the sender thread; a throw (producer closed, metadata unavailable past max.block.ms) is counted. */
    private void send(KvEventBatch batch) {
        try {
            producer.send(new ProducerRecord<>(Topics.KV_EVENTS.name(), identity.id(), batch), (meta, error) -> {
                if (error != null) {
                    publishErrors.incrementAndGet();
                } else {
                    published.incrementAndGet();
                }
            });
        } catch (RuntimeException e) {
            sendFailures.incrementAndGet();
        }
    }

    /** Batches dropped because the buffer was full or the producer refused them. */
    public long dropped() {
        return dropped.get() + sendFailures.get();
    }

    public long publishErrors() {
        return publishErrors.get() + sendFailures.get();
    }

    public long published() {
        return published.get();
    }

    /** Nothing of its own to stop: what is queued is sent when the shared sender's owner closes it. */
    @Override
    public void close() {
    }
}
