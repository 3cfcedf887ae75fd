package io.flotilla.worker.engine.openai;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * How to reach one external engine server (vLLM or SGLang) with an OpenAI-compatible API. Spring
 * binds {@code flotilla.worker.http.*} into this (see {@code WorkerProperties.Http}).
 *
 * @param url            base URL of the engine's HTTP server, e.g. {@code http://localhost:8000}
 * @param servedModel    the model name the engine serves (the {@code model} field of each request)
 * @param kvEvents       the engine's ZMQ KV event PUB endpoint, e.g. {@code tcp://localhost:5557};
 *                       null or blank: no KV events (the worker reports an empty cache)
 * @param kvEventsReplay the engine's ZMQ replay ROUTER endpoint; null or blank: gaps force a resync
 * @param kvEventsTopic  topic prefix to subscribe to ("" for all)
 * @param metricsPath    path of the Prometheus endpoint
 * @param healthPath     path of the health endpoint (200 = healthy)
 * @param clearCachePath path to POST to drop the engine's prefix cache
 * @param scrapeInterval how often metrics and health are read
 * @param unhealthyAfter consecutive failed rounds (health not 200, or metrics unreadable) after
 *                       which the engine counts as unhealthy
 * @param connectTimeout TCP connect timeout to the engine
 * @param requestTimeout longest silence on a request's response stream before it fails
 * @param replayTimeout  how long a KV event replay may take before the gap counts as unrepairable
 * @param maxInFlight    requests in flight to the engine before submit answers overloaded
 * @param returnTokenIds ask for generated token ids ({@code "return_token_ids": true}, vLLM ≥ 0.10)
 */
public record OpenAiEngineSettings(URI url, String servedModel, String kvEvents, String kvEventsReplay,
                                   String kvEventsTopic, String metricsPath, String healthPath, String clearCachePath,
                                   Duration scrapeInterval, int unhealthyAfter, Duration connectTimeout,
                                   Duration requestTimeout, Duration replayTimeout, int maxInFlight,
                                   boolean returnTokenIds) {

    public OpenAiEngineSettings {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(servedModel, "servedModel");
        kvEventsTopic = Objects.requireNonNullElse(kvEventsTopic, "");
        if (unhealthyAfter < 1 || maxInFlight < 1) {
            throw new IllegalArgumentException("unhealthyAfter and maxInFlight must be at least 1");
        }
    }

    /** Defaults for an engine at {@code url} serving {@code model}, without KV events. */
    public static OpenAiEngineSettings of(String url, String model) {
        return new OpenAiEngineSettings(URI.create(url), model, null, null, "", "/metrics", "/health",
                "/reset_prefix_cache", Duration.ofMillis(250), 4, Duration.ofSeconds(2), Duration.ofSeconds(60),
                Duration.ofSeconds(1), 1024, true);
    }

    public OpenAiEngineSettings withKvEvents(String publisher, String replay, String topic) {
        return new OpenAiEngineSettings(url, servedModel, publisher, replay, topic, metricsPath, healthPath, clearCachePath,
                scrapeInterval, unhealthyAfter, connectTimeout, requestTimeout, replayTimeout, maxInFlight, returnTokenIds);
    }

    public OpenAiEngineSettings withScrapeInterval(Duration interval) {
        return new OpenAiEngineSettings(url, servedModel, kvEvents, kvEventsReplay, kvEventsTopic, metricsPath, healthPath,
                clearCachePath, interval, unhealthyAfter, connectTimeout, requestTimeout, replayTimeout, maxInFlight,
                returnTokenIds);
    }

    public OpenAiEngineSettings withReplayTimeout(Duration timeout) {
        return new OpenAiEngineSettings(url, servedModel, kvEvents, kvEventsReplay, kvEventsTopic, metricsPath, healthPath,
                clearCachePath, scrapeInterval, unhealthyAfter, connectTimeout, requestTimeout, timeout, maxInFlight,
                returnTokenIds);
    }

    public OpenAiEngineSettings withMaxInFlight(int max) {
        return new OpenAiEngineSettings(url, servedModel, kvEvents, kvEventsReplay, kvEventsTopic, metricsPath, healthPath,
                clearCachePath, scrapeInterval, unhealthyAfter, connectTimeout, requestTimeout, replayTimeout, max,
                returnTokenIds);
    }

    public boolean hasKvEvents() {
        return kvEvents != null && !kvEvents.isBlank();
    }

    /** {@code url} with {@code path} appended (the URL's own path is kept as a prefix). */
    public URI resolve(String path) {
        String base = url.toString();
        return URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + path);
    }
}
