package io.flotilla.gateway.client;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.ListWorkersResponse;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Models served right now, from the router's {@code ListWorkers}, reused for {@code ttl}. A model is
 * served when a READY, routable aggregated or decode worker runs it; its capabilities are what all
 * those workers' engines honour. When a refresh fails, the last
 * list is kept (a router blip must not make every model vanish); with no list at all the caller gets
 * 503.
 */
public final class ModelCatalog {

    private static final Logger log = LoggerFactory.getLogger(ModelCatalog.class);

    /** Models by name, in name order, and when they were fetched. */
    record Snapshot(SortedMap<String, ServedModel> models, Instant fetched) {
    }

    private final RouterClient router;
    private final Clock clock;
    private final Duration ttl;
    private volatile Snapshot last;
    private volatile Mono<Snapshot> refreshing;

    public ModelCatalog(RouterClient router, Clock clock, Duration ttl) {
        this.router = router;
        this.clock = clock;
        this.ttl = ttl;
    }

    /** Every served model, in name order. */
    public Mono<List<ServedModel>> models() {
        return snapshot().map(s -> List.copyOf(s.models().values()));
    }

    /** The served model {@code name}, or a 404 {@code model_not_found}. */
    public Mono<ServedModel> require(String name) {
        return snapshot().flatMap(s -> {
            ServedModel m = s.models().get(name);
            return m == null ? Mono.error(ApiError.modelNotFound(name)) : Mono.just(m);
        });
    }

    private Mono<Snapshot> snapshot() {
        Snapshot s = last;
        if (s != null && Duration.between(s.fetched(), clock.instant()).compareTo(ttl) < 0) {
            return Mono.just(s);
        }
        return refresh();
    }

    /** One ListWorkers at a time; concurrent callers share it. */
    private synchronized Mono<Snapshot> refresh() {
        if (refreshing == null) {
            refreshing = router.listWorkers()
                    .map(this::toSnapshot)
                    .doOnNext(s -> last = s)
                    .onErrorResume(e -> {
                        Snapshot stale = last;
                        if (stale != null) {
                            log.warn("ListWorkers failed, keeping the model list from {}: {}", stale.fetched(), e.toString());
                            return Mono.just(stale);
                        }
                        return Mono.error(ApiError.unavailable("router_unavailable",
                                "The router is not reachable, so the served models are unknown: " + e.getMessage(),
                                Duration.ofSeconds(1)));
                    })
                    .doFinally(signal -> clearRefreshing())
                    .cache();
        }
        return refreshing;
    }

    private synchronized void clearRefreshing() {
        refreshing = null;
    }

    private Snapshot toSnapshot(ListWorkersResponse response) {
        Map<String, Map<Integer, Integer>> blockSizes = new HashMap<>();
        Map<String, Integer> counts = new HashMap<>();
        Map<String, EngineCapabilities> capabilities = new HashMap<>();
        for (WorkerInfo w : response.getWorkersList()) {
            boolean serves = w.getRoutable() && w.getState() == WorkerState.WORKER_STATE_READY
                    && (w.getRole() == WorkerRole.WORKER_ROLE_AGGREGATED || w.getRole() == WorkerRole.WORKER_ROLE_DECODE);
            if (!serves || w.getModel().isEmpty() || w.getBlockSize() == 0) {
                continue;
            }
            counts.merge(w.getModel(), 1, Integer::sum);
            capabilities.merge(w.getModel(), w.getCapabilities(), ModelCatalog::common);
            blockSizes.computeIfAbsent(w.getModel(), m -> new HashMap<>()).merge(w.getBlockSize(), 1, Integer::sum);
        }
        SortedMap<String, ServedModel> models = new TreeMap<>();
        counts.forEach((model, n) -> {
            int blockSize = Collections.max(blockSizes.get(model).entrySet(), Map.Entry.comparingByValue()).getKey();
            models.put(model, new ServedModel(model, blockSize, n, capabilities.get(model)));
        });
        return new Snapshot(Collections.unmodifiableSortedMap(models), clock.instant());
    }

    /** What both engines honour. */
    static EngineCapabilities common(EngineCapabilities a, EngineCapabilities b) {
        return EngineCapabilities.newBuilder()
                .addAllFeatures(a.getFeaturesList().stream().filter(b.getFeaturesList()::contains).distinct().toList())
                .setMaxTopLogprobs(Math.min(a.getMaxTopLogprobs(), b.getMaxTopLogprobs()))
                .build();
    }
}
