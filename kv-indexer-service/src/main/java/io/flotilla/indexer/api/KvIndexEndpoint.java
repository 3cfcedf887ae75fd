package io.flotilla.indexer.api;

import io.flotilla.indexer.core.ApplierStats;
import io.flotilla.indexer.core.WorkerView;
import io.flotilla.indexer.service.IndexService;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * {@code GET /actuator/kvindex}: what the index holds per worker and its counters.
 * {@code POST /actuator/kvindex/rebuild}: drop the index and replay flotilla.kv-events from the start.
 * {@code POST /actuator/kvindex/snapshot}: write a snapshot now.
 */
@Endpoint(id = "kvindex")
public class KvIndexEndpoint {

    private final IndexService index;

    public KvIndexEndpoint(IndexService index) {
        this.index = index;
    }

    @ReadOperation
    public Map<String, Object> kvindex() {
        ApplierStats s = index.applier().stats();
        Map<String, Object> workers = new LinkedHashMap<>();
        for (WorkerView w : index.applier().workers()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("blocks", w.blocks());
            m.put("epoch", Long.toUnsignedString(w.epoch()));
            m.put("last_seq", w.lastSeq());
            m.put("state", w.state().name().toLowerCase(Locale.ROOT));
            workers.put(w.workerId(), m);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("total_blocks", index.applier().index().residentPairs());
        out.put("workers", workers);
        out.put("events_applied", s.eventsApplied());
        out.put("block_events_applied", s.blockEventsApplied());
        out.put("duplicates", s.duplicates());
        out.put("gaps", s.gaps());
        out.put("stale_batches", s.staleBatches());
        out.put("reconciliations", s.reconciliationsApplied());
        out.put("reconciliations_requested", s.reconciliationsRequested());
        out.put("reconciliation_failures", index.reconciliationFailures());
        out.put("drift_detected", s.driftDetected());
        out.put("lease_expiries", s.leaseExpiries());
        out.put("snapshot_age_ms", index.snapshotAgeMs());
        out.put("corrupt_snapshots", index.corruptSnapshots());
        out.put("consumer_lag", index.consumerLag());
        out.put("kafka_healthy", index.kafkaHealthy());
        return out;
    }

    @WriteOperation
    public Map<String, Object> action(@Selector String action) throws IOException {
        return switch (action) {
            case "rebuild" -> {
                index.rebuild();
                yield Map.of("rebuild", "started");
            }
            case "snapshot" -> Map.of("snapshot", index.snapshotNow().toString());
            default -> throw new IllegalArgumentException("unknown action '" + action + "': use rebuild or snapshot");
        };
    }
}
