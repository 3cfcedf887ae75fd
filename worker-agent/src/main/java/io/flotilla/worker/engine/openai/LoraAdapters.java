package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.AdapterStatus;
import io.flotilla.worker.engine.EngineException;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The LoRA adapters of one vLLM server, kept through its API: discovered from {@code GET /v1/models}
 * (entries whose {@code parent} is the served model; {@code root} is the adapter's path), loaded on demand
 * with {@code POST /v1/load_lora_adapter {"lora_name", "lora_path"}} and unloaded with
 * {@code POST /v1/unload_lora_adapter {"lora_name"}}.
 *
 * <p>The driver of a {@link LoraState}, which decides what is loaded, loads and unloads (its rules are
 * there): this class reads the time from its clock, makes the HTTP calls the state asks for and feeds their
 * outcome back. Every step on the state is serialized by one monitor, held for no I/O and no listener call;
 * the loads in progress are kept beside the state under the same monitor. Thread-safe.
 */
final class LoraAdapters {

    private static final Logger log = LoggerFactory.getLogger(LoraAdapters.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** How often the model list is read again: adapters loaded or unloaded by someone else show up this late. */
    static final Duration DISCOVERY_INTERVAL = Duration.ofSeconds(5);

    private final EngineHttp http;
    private final String baseModel;
    private final String name;
    private final InstantSource clock;
    private final Runnable listener;
    /** Serializes every step on {@link #state} and {@link #loads} ({@link #onState}). */
    private final Object step = new Object();
    private final LoraState state;
    /** The load in progress of each adapter the state is loading, shared by the requests that wait for it. */
    private final Map<String, Mono<Void>> loads = new HashMap<>();

    /**
     * @param clock   times loads and orders this worker's changes against the engine's model lists
     * @param changed called when the loaded set changes
     */
    LoraAdapters(EngineHttp http, String baseModel, LoraSettings settings, String name, InstantSource clock,
                 Runnable changed) {
        this.http = http;
        this.baseModel = baseModel;
        this.name = name;
        this.clock = clock;
        this.listener = changed;
        this.state = new LoraState(settings, DISCOVERY_INTERVAL.toNanos());
    }

    /** The clock's reading in nanoseconds, the one scale {@link LoraState} compares. */
    private long now() {
        Instant t = clock.instant();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    /**
     * At most every {@link #DISCOVERY_INTERVAL}: reads the engine's model list (a blocking control call; the
     * scrape thread makes it after a good round) and takes the LoRA modules it lists as loaded; adapters loaded
     * by this worker that the engine no longer lists are forgotten.
     */
    void discover() {
        long due = now();
        if (!onState(st -> st.discoveryDue(due))) {
            return;
        }
        long asked = now();
        HttpResponse<String> resp;
        try {
            resp = http.controlCall("/v1/models", false, Duration.ofSeconds(5));
        } catch (IOException e) {
            log.debug("{}: cannot list the engine's models: {}", name, e.toString());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (resp.statusCode() / 100 != 2) {
            return;
        }
        Map<String, String> listed = parseModels(resp.body(), baseModel);
        if (onState(st -> st.listed(listed, asked))) {
            listener.run();
        }
    }

    /** LoRA modules of {@code base} in a {@code /v1/models} answer: id → root (its path). */
    static Map<String, String> parseModels(String body, String base) {
        Map<String, String> out = new LinkedHashMap<>();
        JsonNode data = JSON.readTree(body).path("data");
        for (JsonNode m : data) {
            String parent = m.path("parent").isTextual() ? m.path("parent").asText() : "";
            String id = m.path("id").asText("");
            if (!id.isEmpty() && !parent.isEmpty() && parent.equals(base)) {
                out.put(id, m.path("root").asText(""));
            }
        }
        return out;
    }

    /**
     * Takes {@code adapter} for one request: null when it is loaded, else the load to wait for. The caller
     * must {@link #release} it when the request ends, whether or not the load succeeded.
     *
     * @throws InvalidRequestException when the adapter is neither loaded nor loadable
     */
    Mono<Void> acquire(String adapter) {
        long now = now();
        return onState(st -> {
            LoraState.Take take = st.acquire(adapter, now);
            return switch (take.kind()) {
                case READY -> null;
                case JOIN -> loads.get(adapter);
                case LOAD -> {
                    Mono<Void> load = startLoad(adapter, take.path(), take.unload()).cache(); // lazy: no call yet
                    loads.put(adapter, load);
                    yield load;
                }
            };
        });
    }

    /** The engine may be a new process: what it has loaded is read again at the next good scrape. */
    void engineRestarted() {
        onState(st -> {
            st.engineRestarted();
            return null;
        });
    }

    /** One request that {@link #acquire}d {@code adapter} ended. */
    void release(String adapter) {
        onState(st -> {
            st.release(adapter);
            return null;
        });
    }

    /** The calls of one load: the unload the state chose first (its failure does not stop the load), then the load. */
    private Mono<Void> startLoad(String adapter, String path, String unload) {
        Mono<Void> before = unload == null ? Mono.empty() : http.call("/v1/unload_lora_adapter",
                        JSON.createObjectNode().put("lora_name", unload).toString(), "unload-" + unload)
                .doOnSuccess(ignored -> {
                    long now = now();
                    onState(st -> {
                        st.unloaded(unload, now);
                        return null;
                    });
                    log.info("{}: unloaded LoRA adapter '{}' to make room for '{}'", name, unload, adapter);
                })
                .onErrorResume(e -> {
                    onState(st -> {
                        st.unloadFailed(unload);
                        return null;
                    });
                    log.warn("{}: unloading LoRA adapter '{}' failed: {}", name, unload, e.toString());
                    return Mono.empty();
                })
                .then();
        String body = JSON.createObjectNode().put("lora_name", adapter).put("lora_path", path).toString();
        return before.then(Mono.defer(() -> {
            long start = now();
            return http.call("/v1/load_lora_adapter", body, "load-" + adapter)
                    .onErrorResume(EngineException.class, e -> alreadyLoaded(e) ? Mono.just("") : Mono.error(e))
                    .doOnSuccess(ignored -> loaded(adapter, path, start));
        })).doOnError(e -> failed(adapter, e)).then()
                .onErrorMap(e -> !(e instanceof EngineException),
                        e -> new EngineUnavailableException("loading LoRA adapter '" + adapter + "' failed: " + e));
    }

    /** vLLM answers 400 "has already been loaded" when another client loaded it first. */
    private static boolean alreadyLoaded(EngineException e) {
        return e.getMessage() != null && e.getMessage().contains("already been loaded");
    }

    private void loaded(String adapter, String path, long startedNanos) {
        long now = now();
        double ms = (now - startedNanos) / 1e6;
        onState(st -> {
            loads.remove(adapter);
            st.loaded(adapter, path, ms, now);
            return null;
        });
        log.info("{}: loaded LoRA adapter '{}' from {} in {} ms", name, adapter, path, Math.round(ms));
        listener.run();
    }

    private void failed(String adapter, Throwable e) {
        onState(st -> {
            loads.remove(adapter);
            st.loadFailed(adapter);
            return null;
        });
        log.warn("{}: loading LoRA adapter '{}' failed: {}", name, adapter, e.toString());
    }

    /** Loads that went ahead with every loaded adapter in use (vLLM's LoRA cache then chose what stays). */
    long overcommitted() {
        return onState(LoraState::overcommitted);
    }

    AdapterStatus status() {
        return onState(LoraState::status);
    }

    /** The one serialized step: runs {@code event} on the state (and {@link #loads}), no I/O inside. */
    private <R> R onState(Function<LoraState, R> event) {
        synchronized (step) {
            return event.apply(state);
        }
    }
}
