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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The LoRA adapters of one vLLM server, kept through its API: discovered from {@code GET /v1/models}
 * (entries whose {@code parent} is the served model; {@code root} is the adapter's path), loaded on demand
 * with {@code POST /v1/load_lora_adapter {"lora_name", "lora_path"}} and unloaded with
 * {@code POST /v1/unload_lora_adapter {"lora_name"}}.
 *
 * <p>Rules: a request for an adapter that is neither loaded nor loadable (no configured or discovered path)
 * is refused at submit. A request for a loadable adapter that is not loaded waits for its load (one load per
 * adapter at a time; concurrent requests share it). When {@code maxLoaded} adapters are loaded, the least
 * recently used one that no request in flight uses is unloaded first; when every loaded adapter is in use,
 * the load goes ahead anyway and vLLM's own LoRA cache decides what stays on the GPU (counted as
 * {@code overcommitted}). The load time advertised is the mean of the last 16 measured loads, or the
 * configured one before the first. Thread-safe.
 */
final class LoraAdapters {

    private static final Logger log = LoggerFactory.getLogger(LoraAdapters.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int LOAD_SAMPLES = 16;

    private final EngineHttp http;
    private final String baseModel;
    private final LoraSettings settings;
    private final String name;
    /** Loaded adapters → their path, in access order (eldest = least recently used). */
    private final LinkedHashMap<String, String> loaded = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<String, String> discoveredPaths = new HashMap<>();
    private final Map<String, Integer> inUse = new HashMap<>();
    private final Map<String, Mono<Void>> loading = new HashMap<>();
    /** When this worker last loaded or unloaded each adapter (System.nanoTime): a model list asked for earlier is stale for it. */
    private final Map<String, Long> changedAt = new HashMap<>();
    private final ArrayDeque<Double> loadTimes = new ArrayDeque<>();
    private long loads;
    private long unloads;
    private long overcommitted;
    private final Runnable listener;
    private long lastDiscoveryNanos;
    private boolean discovered;

    /** How often the model list is read again: adapters loaded or unloaded by someone else show up this late. */
    static final Duration DISCOVERY_INTERVAL = Duration.ofSeconds(5);

    /** @param changed called when the loaded set changes */
    LoraAdapters(EngineHttp http, String baseModel, LoraSettings settings, String name, Runnable changed) {
        this.http = http;
        this.baseModel = baseModel;
        this.settings = settings;
        this.name = name;
        this.listener = changed;
    }

    /**
     * At most every {@link #DISCOVERY_INTERVAL}: reads the engine's model list (a blocking control call; the
     * scrape thread makes it after a good round) and takes the
     * LoRA modules it lists as loaded; adapters loaded by this worker that the engine no longer lists are
     * forgotten.
     */
    void discover() {
        synchronized (this) {
            long now = System.nanoTime();
            if (discovered && now - lastDiscoveryNanos < DISCOVERY_INTERVAL.toNanos()) {
                return;
            }
            discovered = true;
            lastDiscoveryNanos = now;
        }
        long asked = System.nanoTime();
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
        boolean changed;
        synchronized (this) {
            discoveredPaths.putAll(listed);
            int before = loaded.size();
            TreeSet<String> was = new TreeSet<>(loaded.keySet());
            // what this worker loaded or unloaded after the list was asked for, the list does not show yet
            loaded.keySet().removeIf(a -> !listed.containsKey(a) && !loading.containsKey(a) && !changedSince(a, asked));
            listed.forEach((a, p) -> {
                if (!loaded.containsKey(a) && !changedSince(a, asked)) {
                    loaded.put(a, p);
                }
            });
            changed = before != loaded.size() || !was.equals(new TreeSet<>(loaded.keySet()));
        }
        if (changed) {
            listener.run();
        }
    }

    private boolean changedSince(String adapter, long nanos) {
        Long at = changedAt.get(adapter);
        return at != null && at - nanos >= 0;
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
        Mono<Void> load;
        String unload = null;
        synchronized (this) {
            String path = pathOf(adapter);
            if (!loaded.containsKey(adapter) && path == null) {
                throw new InvalidRequestException("unknown LoRA adapter '" + adapter + "': the engine does not serve it"
                        + " and flotilla.worker.lora.paths has no path for it; this worker serves " + available());
            }
            inUse.merge(adapter, 1, Integer::sum);
            if (loaded.get(adapter) != null) { // an access: most recently used now
                return null;
            }
            load = loading.get(adapter);
            if (load != null) {
                return load;
            }
            if (loaded.size() >= settings.maxLoaded()) {
                unload = idleLeastRecentlyUsed();
                if (unload == null) {
                    overcommitted++;
                } else {
                    loaded.remove(unload);
                    changedAt.put(unload, System.nanoTime());
                }
            }
            load = startLoad(adapter, path, unload).cache();
            loading.put(adapter, load);
        }
        return load;
    }

    /** The engine may be a new process: what it has loaded is read again at the next good scrape. */
    synchronized void engineRestarted() {
        loaded.clear();
        discovered = false;
    }

    /** One request that {@link #acquire}d {@code adapter} ended. */
    synchronized void release(String adapter) {
        inUse.computeIfPresent(adapter, (k, n) -> n == 1 ? null : n - 1);
    }

    private Mono<Void> startLoad(String adapter, String path, String unload) {
        Mono<Void> before = unload == null ? Mono.empty() : http.call("/v1/unload_lora_adapter",
                        JSON.createObjectNode().put("lora_name", unload).toString(), "unload-" + unload)
                .doOnSuccess(ignored -> {
                    synchronized (this) {
                        unloads++;
                    }
                    log.info("{}: unloaded LoRA adapter '{}' to make room for '{}'", name, unload, adapter);
                })
                .onErrorResume(e -> {
                    log.warn("{}: unloading LoRA adapter '{}' failed: {}", name, unload, e.toString());
                    return Mono.empty();
                })
                .then();
        String body = JSON.createObjectNode().put("lora_name", adapter).put("lora_path", path).toString();
        return before.then(Mono.defer(() -> {
            long start = System.nanoTime();
            return http.call("/v1/load_lora_adapter", body, "load-" + adapter)
                    .onErrorResume(EngineException.class, e -> alreadyLoaded(e) ? Mono.just("") : Mono.error(e))
                    .doOnSuccess(ignored -> loaded(adapter, path, (System.nanoTime() - start) / 1e6));
        })).doOnError(e -> failed(adapter, e)).then()
                .onErrorMap(e -> !(e instanceof EngineException),
                        e -> new EngineUnavailableException("loading LoRA adapter '" + adapter + "' failed: " + e));
    }

    /** vLLM answers 400 "has already been loaded" when another client loaded it first. */
    private static boolean alreadyLoaded(EngineException e) {
        return e.getMessage() != null && e.getMessage().contains("already been loaded");
    }

    private void loaded(String adapter, String path, double ms) {
        synchronized (this) {
            loading.remove(adapter);
            loaded.put(adapter, path);
            changedAt.put(adapter, System.nanoTime());
            loads++;
            loadTimes.addLast(ms);
            if (loadTimes.size() > LOAD_SAMPLES) {
                loadTimes.removeFirst();
            }
        }
        log.info("{}: loaded LoRA adapter '{}' from {} in {} ms", name, adapter, path, Math.round(ms));
        listener.run();
    }

    private void failed(String adapter, Throwable e) {
        synchronized (this) {
            loading.remove(adapter);
        }
        log.warn("{}: loading LoRA adapter '{}' failed: {}", name, adapter, e.toString());
    }

    private String pathOf(String adapter) {
        String configured = settings.paths().get(adapter);
        return configured != null ? configured : discoveredPaths.get(adapter);
    }

    private String idleLeastRecentlyUsed() {
        for (Iterator<String> it = loaded.keySet().iterator(); it.hasNext(); ) {
            String a = it.next();
            if (!inUse.containsKey(a)) {
                return a;
            }
        }
        return null;
    }

    private List<String> available() {
        TreeSet<String> all = new TreeSet<>(loaded.keySet());
        all.addAll(settings.paths().keySet());
        all.addAll(discoveredPaths.keySet());
        return List.copyOf(all);
    }

    /** Loads that went ahead with every loaded adapter in use (vLLM's LoRA cache then chose what stays). */
    synchronized long overcommitted() {
        return overcommitted;
    }

    synchronized AdapterStatus status() {
        List<String> mru = new ArrayList<>(loaded.keySet());
        Collections.reverse(mru);
        boolean measured = !loadTimes.isEmpty();
        double ms = measured ? loadTimes.stream().mapToDouble(Double::doubleValue).average().orElse(0) : settings.loadMs();
        return new AdapterStatus(mru, available(), settings.maxLoaded(), ms,
                measured ? AdapterStatus.MEASURED : AdapterStatus.CONFIGURED, loads, unloads);
    }
}
