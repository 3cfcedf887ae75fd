package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.RequestRecord;

/** Where finished-request records go ({@code flotilla.requests} in production). May block briefly. */
public interface RequestRecordSink extends AutoCloseable {

    /** Hands one record over; failures are reported through {@code onError}, never thrown for I/O trouble. */
    void send(RequestRecord record, Runnable onError);

    @Override
    default void close() {
    }
}
