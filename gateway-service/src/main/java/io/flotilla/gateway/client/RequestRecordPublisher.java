package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.RequestRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes request records without ever blocking the request path: {@link #publish} only offers to a
 * bounded queue, and one sender thread hands records to the sink. When the sink is slow or down the
 * queue fills, after which records are dropped and counted ({@link #dropped()}).
 */
public final class RequestRecordPublisher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RequestRecordPublisher.class);

    private final RequestRecordSink sink;
    private final BlockingQueue<RequestRecord> queue;
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final Thread sender;
    private volatile boolean running = true;

    public RequestRecordPublisher(RequestRecordSink sink, int buffer) {
        this.sink = sink;
        this.queue = new ArrayBlockingQueue<>(buffer);
        this.sender = new Thread(this::sendLoop, "gateway-request-records");
        this.sender.setDaemon(true);
        this.sender.start();
    }

    public void publish(RequestRecord record) {
        if (!queue.offer(record)) {
            long n = dropped.incrementAndGet();
            if (Long.bitCount(n) == 1) {
                log.warn("request record buffer full ({} records): dropping record of {} [{} dropped so far]",
                        queue.size(), record.getId(), n);
            }
        }
    }

    /** Records dropped because the buffer was full. */
    public long dropped() {
        return dropped.get();
    }

    /** Records the sink failed to deliver. */
    public long failed() {
        return failed.get();
    }

    private void sendLoop() {
        while (running || !queue.isEmpty()) {
            RequestRecord record;
            try {
                record = queue.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (record != null) {
                try {
                    sink.send(record, failed::incrementAndGet);
                } catch (RuntimeException e) {
                    failed.incrementAndGet();
                }
            }
        }
    }

    /** Sends what is queued (up to a second), then stops the sender and closes the sink. */
    @Override
    public void close() {
        running = false;
        try {
            sender.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sender.interrupt();
        try {
            sink.close();
        } catch (Exception e) {
            log.warn("closing the request record sink failed: {}", e.toString());
        }
    }
}
