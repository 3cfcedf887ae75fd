package io.flotilla.gateway.fakes;

import io.flotilla.gateway.client.RequestRecordSink;
import io.flotilla.protocol.v1.RequestRecord;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/** Request records kept in memory, in place of Kafka. */
public final class RecordingSink implements RequestRecordSink {

    public final List<RequestRecord> records = new CopyOnWriteArrayList<>();

    @Override
    public void send(RequestRecord record, Runnable onError) {
        records.add(record);
    }

    public Optional<RequestRecord> of(String requestId) {
        return records.stream().filter(r -> r.getId().equals(requestId)).findFirst();
    }

    public void clear() {
        records.clear();
    }
}
