package io.flotilla.gateway.fakes;

import io.flotilla.gateway.client.RequestRecordSink;
import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.RequestRecord;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** Request records, and each gateway's latest load report, kept in memory in place of Kafka. */
public final class RecordingSink implements RequestRecordSink {

    public final List<RequestRecord> records = new CopyOnWriteArrayList<>();
    /** The latest load report of each gateway (every test context's gateway reports here), by gateway id. */
    public final Map<String, GatewayLoad> loads = new ConcurrentHashMap<>();

    @Override
    public void send(RequestRecord record, Runnable onError) {
        records.add(record);
    }

    @Override
    public void load(GatewayLoad load, Runnable onError) {
        loads.put(load.getGatewayId(), load);
    }

    public Optional<RequestRecord> of(String requestId) {
        return records.stream().filter(r -> r.getId().equals(requestId)).findFirst();
    }

    public void clear() {
        records.clear();
    }
}
