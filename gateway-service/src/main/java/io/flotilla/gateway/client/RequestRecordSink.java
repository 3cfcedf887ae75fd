package io.flotilla.gateway.client;

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
     * Hands one load report over, as {@link #send}. A sink that publishes nothing (records disabled)
     * drops it: the gateway then tells no planner about its queue.
     */
    default void load(GatewayLoad load, Runnable onError) {
    }

    @Override
    default void close() {
    }
}
