package io.flotilla.gateway.client;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.protocol.v1.EmbeddingCapability;
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
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Models served right now, from the router's {@code ListWorkers}, reused for {@code ttl}. A model is
 * served when a READY, routable aggregated or decode worker runs it (its capabilities are what all those
 * workers' engines honour). Past the ttl the last list is
 * still answered at once while a refresh runs behind it (a slow or dead router must never hold a
 * request up); when a refresh fails, the last list is kept (a router blip must not make every model
 * vanish), and so is an empty list after a non-empty one (a restarted router lists nobody until the
 * workers' next heartbeats); with no list at all the caller waits for the first one and gets 503 if it fails.
 *
 * <p>One block-hash namespace, verified: each model's workers register their namespace (tokenizer id
 * and where to load it, KV layout, block size); the {@link NamespaceCheck} compares it with the gateway's
 * for that model. A model whose namespaces differ (or whose workers disagree) stays listed with its
 * problem, and every request for it is refused with a 500 {@code model_namespace_mismatch} naming the
 * difference, never tokenized with the wrong tokenizer.
 */
public final class ModelCatalog {

    private static final Logger log = LoggerFactory.getLogger(ModelCatalog.class);

    /** Models by name, in name order, and when they were fetched. */
    record Snapshot(SortedMap<String, ServedModel> models, Instant fetched) {
    }

    /** The gateway's side of the namespace comparison. */
    @FunctionalInterface
    public interface NamespaceCheck {

        /** Why the gateway cannot serve {@code model} as its workers registered it; empty when it can. */
        Optional<String> problem(String model, int blockSize, String tokenizerId, String tokenizerSource, String kvLayout);

        /** No check (tests of other parts). */
        NamespaceCheck NONE = (m, b, t, s, l) -> Optional.empty();
    }

    private final RouterClient router;
    private final Clock clock;
    private final Duration ttl;
    private final NamespaceCheck namespaces;
    private volatile Snapshot last;
    private volatile Mono<Snapshot> refreshing;

    public ModelCatalog(RouterClient router, Clock clock, Duration ttl) {
        this(router, clock, ttl, NamespaceCheck.NONE);
    }

    public ModelCatalog(RouterClient router, Clock clock, Duration ttl, NamespaceCheck namespaces) {
        this.router = router;
        this.clock = clock;
        this.ttl = ttl;
        this.namespaces = namespaces;
    }

    /** Every served model, in name order. */
    public Mono<List<ServedModel>> models() {
        return snapshot().map(s -> List.copyOf(s.models().values()));
    }

    /**
     * The served model {@code name}, or a 404 {@code model_not_found}, or a 500 {@code model_namespace_mismatch}
     * when the gateway's block-hash namespace for it differs from its workers'.
     */
    public Mono<ServedModel> require(String name) {
        return snapshot().flatMap(s -> {
            ServedModel m = s.models().get(name);
            if (m == null) {
                return Mono.error(ApiError.modelNotFound(name));
            }
            if (!m.routable()) {
                return Mono.error(new ApiError(500, ApiError.SERVER, "model", "model_namespace_mismatch",
                        "The model '" + name + "' cannot be served: " + m.problem(), null));
            }
            return Mono.just(m);
        });
    }

    /**
     * What a request's {@code model} names: a served model, or a LoRA adapter one of its workers serves
     * (the base model with that adapter; a base model's own name wins over an adapter's). Else as
     * {@link #require}: a 404 {@code model_not_found}, or a 500 {@code model_namespace_mismatch}.
     */
    public Mono<ModelTarget> target(String name) {
        return snapshot().flatMap(s -> {
            if (!s.models().containsKey(name)) {
                for (ServedModel m : s.models().values()) {
                    if (m.adapters().contains(name)) {
                        return require(m.name()).map(base -> new ModelTarget(base, name));
                    }
                }
            }
            return require(name).map(base -> new ModelTarget(base, ""));
        });
    }

    /** A served model and the LoRA adapter a request runs on ("" for the base model). */
    public record ModelTarget(ServedModel model, String adapter) {
    }

    /** Models of the last list that cannot be routed, with why (for health); empty before the first list. */
    public Map<String, String> problems() {
        Snapshot s = last;
        Map<String, String> out = new TreeMap<>();
        if (s != null) {
            s.models().values().stream().filter(m -> !m.routable()).forEach(m -> out.put(m.name(), m.problem()));
        }
        return out;
    }

    private Mono<Snapshot> snapshot() {
        Snapshot s = last;
        if (s == null) {
            return refresh();
        }
        if (Duration.between(s.fetched(), clock.instant()).compareTo(ttl) >= 0) {
            refresh().subscribe(fresh -> { }, e -> { });
        }
        return Mono.just(s);
    }

    /** One ListWorkers at a time; concurrent callers share it. */
    private synchronized Mono<Snapshot> refresh() {
        if (refreshing == null) {
            refreshing = router.listWorkers()
                    .map(this::toSnapshot)
                    .flatMap(s -> {
                        Snapshot previous = last;
                        // A router that just (re)started lists no worker until their heartbeats arrive: an
                        // empty list after a non-empty one is not news yet, or every model would be a 404.
                        return s.models().isEmpty() && previous != null && !previous.models().isEmpty()
                                ? Mono.error(new IllegalStateException("the router lists no worker at all"))
                                : Mono.just(s);
                    })
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

    /** The last logged problem per model, so a mismatch is logged once, not on every refresh. */
    private final Map<String, String> known = new java.util.concurrent.ConcurrentHashMap<>();

    private static String describe(WorkerInfo w) {
        return "tokenizer=" + w.getTokenizerId() + " layout=" + w.getKvLayout();
    }

    private synchronized void clearRefreshing() {
        refreshing = null;
    }

    private Snapshot toSnapshot(ListWorkersResponse response) {
        Map<String, Map<Integer, Integer>> blockSizes = new HashMap<>();
        Map<String, Integer> counts = new HashMap<>();
        Map<String, EngineCapabilities> capabilities = new HashMap<>();
        Map<String, List<WorkerInfo>> serving = new HashMap<>();
        for (WorkerInfo w : response.getWorkersList()) {
            boolean serves = w.getRoutable() && w.getState() == WorkerState.WORKER_STATE_READY
                    && (w.getRole() == WorkerRole.WORKER_ROLE_AGGREGATED || w.getRole() == WorkerRole.WORKER_ROLE_DECODE);
            if (!serves || w.getModel().isEmpty() || w.getBlockSize() == 0) {
                continue;
            }
            counts.merge(w.getModel(), 1, Integer::sum);
            capabilities.merge(w.getModel(), w.getCapabilities(), ModelCatalog::common);
            blockSizes.computeIfAbsent(w.getModel(), m -> new HashMap<>()).merge(w.getBlockSize(), 1, Integer::sum);
            serving.computeIfAbsent(w.getModel(), m -> new java.util.ArrayList<>()).add(w);
        }
        SortedMap<String, ServedModel> models = new TreeMap<>();
        counts.forEach((model, n) -> {
            int blockSize = Collections.max(blockSizes.get(model).entrySet(), Map.Entry.comparingByValue()).getKey();
            // the router routes a request only to workers of its block size, so only those must agree
            Set<String> namespaces = new TreeSet<>();
            WorkerInfo w = null;
            for (WorkerInfo candidate : serving.get(model)) {
                if (candidate.getBlockSize() == blockSize) {
                    namespaces.add(describe(candidate));
                    w = candidate;
                }
            }
            String problem;
            if (namespaces.size() > 1) {
                problem = "its workers hash in different block-hash namespaces " + namespaces
                        + "; give every worker of the model the same tokenizer-id and dtype";
            } else {
                problem = this.namespaces.problem(model, blockSize, w.getTokenizerId(), w.getTokenizerSource(),
                        w.getKvLayout()).orElse("");
            }
            if (!problem.isEmpty() && !problem.equals(known.get(model))) {
                log.error("model '{}' is not routable: {}", model, problem);
            }
            known.put(model, problem);
            java.util.SortedSet<String> adapters = new TreeSet<>();
            serving.get(model).forEach(x -> adapters.addAll(x.getAdaptersList()));
            boolean publicPrefixes = serving.get(model).stream().allMatch(
                    x -> x.getTenantIsolation() == io.flotilla.protocol.v1.TenantIsolation.TENANT_ISOLATION_SALT_AFTER_PUBLIC_PREFIX);
            models.put(model, new ServedModel(model, blockSize, n, w.getTokenizerId(), w.getTokenizerSource(),
                    w.getKvLayout(), problem, capabilities.get(model), adapters, publicPrefixes));
        });
        return new Snapshot(Collections.unmodifiableSortedMap(models), clock.instant());
    }

    /**
     * What both engines honour. Embeddings are the exception: the router sends an embedding only to workers that
     * embed, so the model embeds when either does; where both do, a vector as long as the shorter one's, shortened
     * only where both can shorten theirs (workers of one model should agree on both).
     */
    static EngineCapabilities common(EngineCapabilities a, EngineCapabilities b) {
        EngineCapabilities.Builder out = EngineCapabilities.newBuilder()
                .addAllFeatures(a.getFeaturesList().stream().filter(b.getFeaturesList()::contains).distinct().toList())
                .setMaxTopLogprobs(Math.min(a.getMaxTopLogprobs(), b.getMaxTopLogprobs()));
        if (a.hasEmbedding() && b.hasEmbedding()) {
            EmbeddingCapability x = a.getEmbedding();
            EmbeddingCapability y = b.getEmbedding();
            out.setEmbedding(EmbeddingCapability.newBuilder()
                    .setDimensions(Math.min(x.getDimensions(), y.getDimensions()))
                    .setTruncatable(x.getTruncatable() && y.getTruncatable() && x.getDimensions() == y.getDimensions()));
        } else if (a.hasEmbedding() || b.hasEmbedding()) {
            out.setEmbedding(a.hasEmbedding() ? a.getEmbedding() : b.getEmbedding());
        }
        return out.build();
    }
}
