package io.flotilla.protocol.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Every Kafka topic of Flotilla, with its configuration, in one place (ARCHITECTURE "Kafka topics"). */
public final class Topics {

    /** KvEventBatch keyed by worker id: partitioning by key keeps each worker's batches in order. */
    public static final Topic KV_EVENTS = new Topic("flotilla.kv-events", 8, Map.of(
            "cleanup.policy", "delete",
            "retention.ms", ms(Duration.ofHours(6))));

    /** WorkerStatus keyed by worker id; compacted so a new consumer reads the latest status of each worker. */
    public static final Topic WORKERS = new Topic("flotilla.workers", 4, Map.of(
            "cleanup.policy", "compact",
            "segment.ms", ms(Duration.ofMinutes(10)),
            "min.cleanable.dirty.ratio", "0.1",
            "delete.retention.ms", ms(Duration.ofMinutes(10))));

    /** WorkerLoad keyed by worker id; only recent reports matter. */
    public static final Topic WORKER_LOAD = new Topic("flotilla.worker-load", 4, Map.of(
            "cleanup.policy", "delete",
            "retention.ms", ms(Duration.ofMinutes(15)),
            "segment.ms", ms(Duration.ofMinutes(5))));

    /** RequestRecord keyed by request id, one per finished request; read by the planner and bench. */
    public static final Topic REQUESTS = new Topic("flotilla.requests", 4, Map.of(
            "cleanup.policy", "delete",
            "retention.ms", ms(Duration.ofDays(7))));

    /** GatewayLoad keyed by gateway id: each replica's flow-control queue, every second; only recent reports matter. */
    public static final Topic GATEWAY_LOAD = new Topic("flotilla.gateway-load", 4, Map.of(
            "cleanup.policy", "delete",
            "retention.ms", ms(Duration.ofMinutes(15)),
            "segment.ms", ms(Duration.ofMinutes(5))));

    /** RouterSync keyed by router id: booking changes shared between router replicas. */
    public static final Topic ROUTER_SYNC = new Topic("flotilla.router-sync", 1, Map.of(
            "cleanup.policy", "delete",
            "retention.ms", ms(Duration.ofMinutes(10)),
            "segment.ms", ms(Duration.ofMinutes(5))));

    /** PlannerDecision keyed by model; compacted so the latest decision per model survives. */
    public static final Topic PLANNER_DECISIONS = new Topic("flotilla.planner-decisions", 1, Map.of(
            "cleanup.policy", "compact",
            "segment.ms", ms(Duration.ofMinutes(10))));

    public static final List<Topic> ALL = List.of(KV_EVENTS, WORKERS, WORKER_LOAD, REQUESTS, GATEWAY_LOAD, ROUTER_SYNC,
            PLANNER_DECISIONS);

    private Topics() {
    }

    private static String ms(Duration d) {
        return Long.toString(d.toMillis());
    }
}
