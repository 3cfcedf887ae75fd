package io.flotilla.gateway.client;

import io.flotilla.boot.trace.TracedRecord;
import io.flotilla.protocol.kafka.BoundedSender;
import io.flotilla.protocol.v1.RequestRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes request records without ever blocking the request path: {@link #publish} only offers to a
 * bounded queue, and one sender thread hands records to the sink. When the sink is slow or down the
 * queue fills, after which records are dropped and counted ({@link #dropped()}). Each record takes the trace
 * context current where it is published (the request's, see {@code RequestAccounting}) to the sender thread.
 */
public final class RequestRecordPublisher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RequestRecordPublisher.class);

    private final RequestRecordSink sink;
    private final AtomicLong failed = new AtomicLong();
    private final BoundedSender<TracedRecord<RequestRecord>> sender;

    public RequestRecordPublisher(RequestRecordSink sink, int buffer) {
        this.sink = sink;
        this.sender = new BoundedSender<>("gateway-request-records", buffer,
                record -> sink.send(record, failed::incrementAndGet));
    }

    public void publish(RequestRecord record) {
        if (!sender.offer(TracedRecord.capture(record))) {
            long n = sender.dropped();
            if (Long.bitCount(n) == 1) {
                log.warn("request record buffer full ({} records): dropping record of {} [{} dropped so far]",
                        sender.queued(), record.getId(), n);
            }
        }
    }

    /** Records dropped because the buffer was full. */
    public long dropped() {
        return sender.dropped();
    }

    /** Records the sink failed to deliver. */
    public long failed() {
        return failed.get() + sender.sendFailures();
    }

    /** Sends what is queued (up to a second), then stops the sender and closes the sink. */
    @Override
    public void close() {
        sender.close();
        try {
            sink.close();
        } catch (Exception e) {
            log.warn("closing the request record sink failed: {}", e.toString());
        }
    }
}
