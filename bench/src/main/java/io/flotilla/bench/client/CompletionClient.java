package io.flotilla.bench.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Streams {@code POST {url}/v1/completions} with token-id prompts over HTTP/1.1 (JDK HttpClient; one
 * connection per in-flight stream, bodies read by a non-blocking line subscriber, so hundreds of
 * concurrent streams need only a couple of threads). Request body:
 * <pre>
 * {"model": M, "prompt": [ids…], "max_tokens": N, "stream": true,
 *  "stream_options": {"include_usage": true}, "ignore_eos": true, "temperature": 0
 *  [, "return_token_ids": true]}
 * </pre>
 * Headers: {@code Authorization: Bearer <api key>} when given (a tenant's own key replaces it),
 * {@code x-flotilla-disagg: off|auto} when a disaggregation hint is set ({@code off}: the request stays
 * aggregated on one worker; {@code auto}: the router may run its prefill on the prefill pool),
 * {@code x-flotilla-queue-timeout: <ms>ms} when a queue timeout is set, {@code x-flotilla-priority}
 * when the request has a band. A request with a tenant also sends {@code "user": tenant}.
 */
public final class CompletionClient implements CompletionSender, AutoCloseable {

    public static final String DISAGG_HEADER = "x-flotilla-disagg";
    public static final String QUEUE_TIMEOUT_HEADER = "x-flotilla-queue-timeout";
    public static final String PRIORITY_HEADER = "x-flotilla-priority";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http;
    private final ExecutorService executor;
    private final URI completions;
    private final String modelJson;
    private final String apiKey;
    private final String disaggHint;
    private final boolean returnTokenIds;
    private final Duration requestTimeout;
    private final Duration queueTimeout;

    public CompletionClient(String baseUrl, String model, String apiKey, String disaggHint, boolean returnTokenIds,
                            Duration requestTimeout) {
        this(baseUrl, model, apiKey, disaggHint, returnTokenIds, requestTimeout, null);
    }

    /** @param queueTimeout sent as {@code x-flotilla-queue-timeout}; null sends none (the gateway's default) */
    public CompletionClient(String baseUrl, String model, String apiKey, String disaggHint, boolean returnTokenIds,
                            Duration requestTimeout, Duration queueTimeout) {
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(3, r -> {
            Thread t = new Thread(r, "bench-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.http = httpClient(executor);
        this.completions = URI.create(trimSlash(baseUrl) + "/v1/completions");
        try {
            this.modelJson = JSON.writeValueAsString(model);
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
        this.apiKey = apiKey;
        this.disaggHint = disaggHint;
        this.returnTokenIds = returnTokenIds;
        this.requestTimeout = requestTimeout;
        this.queueTimeout = queueTimeout;
    }

    static HttpClient httpClient(ExecutorService executor) {
        HttpClient.Builder b = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10));
        return (executor == null ? b : b.executor(executor)).build();
    }

    /**
     * Sends one request; the future completes (never exceptionally) when the response body ended, the
     * request failed, {@code requestTimeout} passed or the recorder was aborted.
     */
    @Override
    public CompletableFuture<StreamMeasurement> send(int[] prompt, int maxTokens, StreamRecorder recorder) {
        return send(prompt, maxTokens, recorder, io.flotilla.bench.run.RequestLabels.NONE);
    }

    @Override
    public CompletableFuture<StreamMeasurement> send(int[] prompt, int maxTokens, StreamRecorder recorder,
                                                     io.flotilla.bench.run.RequestLabels labels) {
        HttpRequest.Builder b = HttpRequest.newBuilder(completions)
                .timeout(requestTimeout)
                .header("Content-Type", "application/json")
                .header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body(prompt, maxTokens, labels.tenant())));
        String key = labels.apiKey() != null ? labels.apiKey() : apiKey;
        if (key != null && !key.isEmpty()) {
            b.header("Authorization", "Bearer " + key);
        }
        if (disaggHint != null && !disaggHint.isEmpty()) {
            b.header(DISAGG_HEADER, disaggHint);
        }
        if (queueTimeout != null) {
            b.header(QUEUE_TIMEOUT_HEADER, queueTimeout.toMillis() + "ms");
        }
        if (!labels.priority().isEmpty()) {
            b.header(PRIORITY_HEADER, labels.priority());
        }
        HttpResponse.BodyHandler<Void> handler = info -> {
            recorder.onResponse(info.statusCode(), info.headers());
            if (info.statusCode() == 200) {
                return HttpResponse.BodySubscribers.fromLineSubscriber(recorder);
            }
            return HttpResponse.BodySubscribers.mapping(HttpResponse.BodySubscribers.ofString(StandardCharsets.UTF_8),
                    text -> {
                        recorder.onHttpErrorBody(text);
                        return null;
                    });
        };
        CompletableFuture<HttpResponse<Void>> exchange = http.sendAsync(b.build(), handler);
        CompletableFuture<HttpResponse<Void>> guarded = exchange.orTimeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
        recorder.onAbort(() -> guarded.completeExceptionally(new CancellationException("run stopped")));
        return guarded.handle((response, error) -> {
            if (error != null) {
                recorder.cancel();
                exchange.cancel(true);
            }
            return recorder.finish(error);
        });
    }

    byte[] body(int[] prompt, int maxTokens) {
        return body(prompt, maxTokens, "");
    }

    byte[] body(int[] prompt, int maxTokens, String user) {
        StringBuilder sb = new StringBuilder(prompt.length * 6 + 256);
        sb.append("{\"model\":").append(modelJson).append(",\"prompt\":[");
        for (int i = 0; i < prompt.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(prompt[i]);
        }
        sb.append("],\"max_tokens\":").append(maxTokens)
                .append(",\"stream\":true,\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true,\"temperature\":0");
        if (returnTokenIds) {
            sb.append(",\"return_token_ids\":true");
        }
        if (!user.isEmpty()) {
            try {
                sb.append(",\"user\":").append(JSON.writeValueAsString(user));
            } catch (IOException e) {
                throw new IllegalArgumentException(e);
            }
        }
        return sb.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Whether the server accepts {@code return_token_ids}: one 1-token request with it; false only when the
     * server answers 400 naming the parameter (a strict OpenAI server), true otherwise (a failure of any
     * other kind shows up in the run itself).
     */
    public static boolean acceptsReturnTokenIds(String baseUrl, String model, String apiKey) {
        try {
            String body = "{\"model\":" + JSON.writeValueAsString(model)
                    + ",\"prompt\":[1,2,3],\"max_tokens\":1,\"return_token_ids\":true}";
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(trimSlash(baseUrl) + "/v1/completions"))
                    .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body));
            if (apiKey != null && !apiKey.isEmpty()) {
                b.header("Authorization", "Bearer " + apiKey);
            }
            HttpResponse<String> r = httpClient(null).send(b.build(), HttpResponse.BodyHandlers.ofString());
            return !(r.statusCode() == 400 && r.body().contains("return_token_ids"));
        } catch (IOException e) {
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    /** The first model of {@code GET {url}/v1/models}. */
    public static String firstModel(String baseUrl, String apiKey) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(trimSlash(baseUrl) + "/v1/models"))
                .timeout(Duration.ofSeconds(10)).GET();
        if (apiKey != null && !apiKey.isEmpty()) {
            b.header("Authorization", "Bearer " + apiKey);
        }
        try {
            HttpResponse<String> r = httpClient(null).send(b.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("GET " + baseUrl + "/v1/models answered " + r.statusCode() + "; pass --model");
            }
            JsonNode data = JSON.readTree(r.body()).path("data");
            if (!data.isArray() || data.isEmpty() || !data.get(0).hasNonNull("id")) {
                throw new IllegalStateException("GET " + baseUrl + "/v1/models lists no model; pass --model");
            }
            return data.get(0).get("id").asText();
        } catch (IOException e) {
            throw new IllegalStateException("cannot reach " + baseUrl + "/v1/models (" + e.getMessage() + "); is the gateway up?", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    static String trimSlash(String url) {
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
