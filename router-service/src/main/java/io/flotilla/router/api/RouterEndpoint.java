package io.flotilla.router.api;

import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.client.DeadlineEstimator;
import io.flotilla.router.client.IndexerClient;
import io.flotilla.router.core.ActiveLoad;
import io.flotilla.router.core.Capacity;
import io.flotilla.router.core.WorkerView;
import io.flotilla.router.service.CapacityPublisher;
import io.flotilla.router.service.RequestRouter;
import io.flotilla.router.service.RouterMetrics;
import io.flotilla.router.core.Strategy;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code GET /actuator/router}: mode, workers in membership with their load as routing counts it (and their
 * LoRA adapters and tenant isolation as routing sees them),
 * per-model saturation, decision counts, the indexer's deadline and measured tail, router-sync lag.
 * {@code POST /actuator/router} with {@code {"mode": "round-robin"}}: switch the mode at run time.
 */
@Endpoint(id = "router")
public class RouterEndpoint {

    private final RequestRouter engine;
    private final RouterMetrics metrics;
    private final CapacityPublisher capacity;

    public RouterEndpoint(RequestRouter engine, RouterMetrics metrics, CapacityPublisher capacity) {
        this.engine = engine;
        this.metrics = metrics;
        this.capacity = capacity;
    }

    @ReadOperation
    public Map<String, Object> router() {
        Map<String, ActiveLoad> booked = engine.ledger().sequences().loads();
        List<Map<String, Object>> workers = new ArrayList<>();
        List<Map<String, Object>> models = new ArrayList<>();
        for (Capacity c : engine.capacity()) { // the same merge and busy rule as routing decisions
            for (Capacity.Headroom h : c.workers()) {
                WorkerView w = h.worker();
                ActiveLoad own = booked.getOrDefault(w.id(), ActiveLoad.NONE);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("id", w.id());
                m.put("role", w.role().name().toLowerCase(Locale.ROOT));
                m.put("state", stateOf(w));
                m.put("model", w.model());
                m.put("endpoint", w.endpoint());
                m.put("active_prefill_tokens", h.queuedPrefillTokens());
                m.put("active_blocks", h.activeBlocks());
                m.put("booked_prefill_tokens", own.prefillTokens());
                m.put("booked_blocks", own.decodeBlocks());
                m.put("running", w.load().running());
                m.put("waiting", w.load().waiting());
                m.put("busy", h.busy());
                WorkerStatus status = engine.directory().status(w.id());
                m.put("capacity_blocks", w.totalKvBlocks());
                m.put("capacity_source", status == null ? "" : status.getCapacitySource());
                m.put("engine", status == null ? "" : status.getEngine());
                m.put("timing", timingOf(w, status));
                if (w.tiers().bytesPerBlock() > 0) {
                    Map<String, Object> tiers = new LinkedHashMap<>();
                    tiers.put("bytes_per_block", w.tiers().bytesPerBlock());
                    tiers.put("host_bytes_per_second", w.tiers().hostBytesPerSecond());
                    tiers.put("disk_bytes_per_second", w.tiers().diskBytesPerSecond());
                    m.put("kv_tiers", tiers);
                }
                if (!w.adapters().available().isEmpty()) {
                    m.put("adapters", Map.of("loaded", new java.util.TreeSet<>(w.adapters().loaded()),
                            "available", new java.util.TreeSet<>(w.adapters().available()), "load_ms", w.adapters().loadMs()));
                }
                m.put("tenant_isolation", w.isolation().name().toLowerCase(Locale.ROOT));
                workers.add(m);
            }
            models.add(Map.of("model", c.model(), "saturated", c.saturated(), "free_workers", c.freeWorkers()));
        }
        workers.sort(Comparator.comparing(m -> (String) m.get("id")));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", engine.mode().configName());
        out.put("router_id", engine.routerId());
        out.put("membership_feed_healthy", engine.directory().feedHealthy());
        out.put("workers", workers);
        out.put("models", models);
        out.put("decisions", metrics.decisionCounts());
        out.put("active_sequences", engine.ledger().sequences().size());
        out.put("indexer", indexer());
        out.put("sync", metrics.syncLag());
        out.put("capacity_watchers", capacity.watchers());
        return out;
    }

    private Map<String, Object> indexer() {
        IndexerClient client = engine.indexer();
        DeadlineEstimator d = client.deadline();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("breaker", client.breakerState().name().toLowerCase(Locale.ROOT));
        out.put("errors", client.errors());
        out.put("missed_deadlines", client.missedDeadlines());
        out.put("deadline_ms", d.deadlineNanos() / 1e6);
        out.put("deadline_adaptive", !d.settings().floor().equals(d.settings().ceiling()));
        out.put("tail_quantile", d.settings().quantile());
        out.put("tail_ms", d.tailNanos() < 0 ? null : d.tailNanos() / 1e6);
        out.put("window_calls", d.windowCount());
        return out;
    }

    @WriteOperation
    public Map<String, Object> setMode(String mode) {
        engine.switchMode(Strategy.parse(mode));
        return Map.of("mode", engine.mode().configName());
    }

    /** Where the worker's timing comes from: advertised (simulator), learned (with its samples) or none (priced by load). */
    private Map<String, Object> timingOf(WorkerView w, WorkerStatus status) {
        Map<String, Object> t = new LinkedHashMap<>();
        if (status != null && status.hasTiming() && w.timing().isPresent()) {
            t.put("source", "advertised");
        } else if (w.timing().isPresent()) {
            WorkerLoad load = engine.directory().load(w.id());
            t.put("source", "learned");
            t.put("prefill_samples", load == null ? 0 : load.getPrefillSamples());
            t.put("decode_samples", load == null ? 0 : load.getDecodeSamples());
        } else {
            t.put("source", "none");
        }
        w.timing().ifPresent(x -> {
            t.put("prefill_ms_per_token", x.prefillB() / x.speedup());
            t.put("prefill_ms_fixed", x.prefillC() / x.speedup());
            t.put("decode_ms_idle", x.decodeMs(0));
            t.put("decode_ms_full", x.decodeMs(1));
        });
        return t;
    }

    private static String stateOf(WorkerView w) {
        if (w.acceptsRequests()) {
            return "ready";
        }
        if (!w.routable()) {
            return "suspect";
        }
        return w.state().name().toLowerCase(Locale.ROOT);
    }
}
