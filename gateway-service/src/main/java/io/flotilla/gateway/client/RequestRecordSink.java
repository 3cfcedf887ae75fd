package io.flotilla.gateway.client;

import io.flotilla.boot.trace.TracedRecord;
import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.RequestRecord;

/**
 * Where finished-request records ({@code flotilla.requests}) and the gateway's load reports
 * ({@code flotilla.gateway-load}) go in production. May block briefly.
 */
public interface RequestRecordSink extends AutoCloseable {

    /** Hands one record over; failures are reported through {@code onError}, never thrown for I/O trouble. */
    void send(RequestRecord record, Runnable onError);

    /**
     * Hands one record over with the trace context of the request it describes. A sink that keeps no headers
     * (tests, records disabled) sends the value alone.
     */
    default void send(TracedRecord<RequestRecord> record, Runnable onError) {
        send(record.value(), onError);
    }

    /**
     * Hands one load report over, as {@link #send}. A sink that publishes nothing (records disabled)
     * drops it: the gateway then tells no planner about its queue.
     */
    default void load(GatewayLoad load, Runnable onError) {
    }

    @Override
    default void close() {
    }
}
