package io.flotilla.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.flotilla.bench.stats.OracleHitRate;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An OpenAI-compatible gateway for tests, on a real socket: {@code GET /v1/models}, streaming
 * {@code POST /v1/completions} (token-id prompts; one content chunk per two tokens, each with
 * {@code token_ids}; a usage chunk; {@code [DONE]}) and the router's {@code /actuator/router}.
 * Requests go round-robin to {@code workers} simulated workers, each with an unlimited prefix cache
 * (an {@link OracleHitRate} per worker), so {@code cached_tokens} behaves like a real engine's.
 * Every {@code failEvery}-th request (1-based) is answered 503; every {@code errorEvery}-th streams
 * an error event after its first chunk.
 */
public final class FakeGateway implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    public final List<JsonNode> bodies = Collections.synchronizedList(new ArrayList<>());
    public final List<String> disaggHeaders = Collections.synchronizedList(new ArrayList<>());
    /** Per request: "queue-timeout|priority|authorization" as received ("null" for absent headers). */
    public final List<String> flowHeaders = Collections.synchronizedList(new ArrayList<>());
    public final List<String> modePosts = Collections.synchronizedList(new ArrayList<>());
    public final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger count = new AtomicInteger();
    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(16);
    private final OracleHitRate[] caches;
    private final int failEvery;
    private final int errorEvery;
    private volatile String mode = "kv";

    public FakeGateway(int workers, int failEvery, int errorEvery) throws IOException {
        this.failEvery = failEvery;
        this.errorEvery = errorEvery;
        this.caches = new OracleHitRate[workers];
        for (int i = 0; i < workers; i++) {
            caches[i] = new OracleHitRate(16);
        }
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
        server.setExecutor(executor);
        server.createContext("/v1/models", ex -> respond(ex, 200, "{\"object\":\"list\",\"data\":[{\"id\":\"fake-model\"}]}"));
        server.createContext("/v1/completions", this::completions);
        server.createContext("/actuator/router", this::router);
        server.start();
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public String mode() {
        return mode;
    }

    /** Forgets every worker's cache (what ClearKvCache does on a real cluster). */
    public synchronized void clearCaches() {
        for (int i = 0; i < caches.length; i++) {
            caches[i] = new OracleHitRate(16);
        }
    }

    private void router(HttpExchange ex) throws IOException {
        if (ex.getRequestMethod().equals("POST")) {
            String m = JSON.readTree(ex.getRequestBody().readAllBytes()).path("mode").asText();
            modePosts.add(m);
            mode = m;
        }
        respond(ex, 200, "{\"mode\":\"" + mode + "\"}");
    }

    /**
     * Concurrency is counted from the start of the handler to just before the response's last write,
     * so a client cannot see a request end before it stopped counting here.
     */
    private void completions(HttpExchange ex) throws IOException {
        int n = count.incrementAndGet();
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        java.util.concurrent.atomic.AtomicBoolean counted = new java.util.concurrent.atomic.AtomicBoolean(true);
        Runnable leave = () -> {
            if (counted.getAndSet(false)) {
                inFlight.decrementAndGet();
            }
        };
        try {
            JsonNode body = JSON.readTree(ex.getRequestBody().readAllBytes());
            bodies.add(body);
            disaggHeaders.add(String.valueOf(ex.getRequestHeaders().getFirst("x-flotilla-disagg")));
            flowHeaders.add(ex.getRequestHeaders().getFirst("x-flotilla-queue-timeout") + "|"
                    + ex.getRequestHeaders().getFirst("x-flotilla-priority") + "|" + ex.getRequestHeaders().getFirst("Authorization"));
            if (failEvery > 0 && n % failEvery == 0) {
                leave.run();
                respond(ex, 503, "{\"error\":{\"message\":\"waited too long\",\"code\":\"queue_timeout\"}}");
                return;
            }
            int[] prompt = new int[body.get("prompt").size()];
            for (int i = 0; i < prompt.length; i++) {
                prompt[i] = body.get("prompt").get(i).asInt();
            }
            int worker = (n - 1) % caches.length;
            int cached;
            synchronized (this) {
                cached = caches[worker].observe(prompt);
            }
            int maxTokens = body.get("max_tokens").asInt();
            ex.getResponseHeaders().add("Content-Type", "text/event-stream");
            ex.getResponseHeaders().add("x-flotilla-worker", "worker-" + worker);
            ex.getResponseHeaders().add("x-flotilla-queue-ms", Integer.toString(n % 7));
            ex.getResponseHeaders().add("x-flotilla-mode", n % 5 == 0 ? "gateway_fallback" : "kv");
            ex.sendResponseHeaders(200, 0);
            try (OutputStream out = ex.getResponseBody()) {
                int sent = 0;
                while (sent < maxTokens) {
                    int k = Math.min(2, maxTokens - sent);
                    StringBuilder ids = new StringBuilder();
                    for (int i = 0; i < k; i++) {
                        ids.append(i == 0 ? "" : ",").append(1000 + sent + i);
                    }
                    event(out, "{\"id\":\"cmpl-" + n + "\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,"
                            + "\"text\":\"t" + sent + "\",\"token_ids\":[" + ids + "],\"finish_reason\":null}]}");
                    sent += k;
                    if (errorEvery > 0 && n % errorEvery == 0) {
                        leave.run();
                        event(out, "{\"error\":{\"message\":\"engine failed\",\"code\":500}}");
                        return;
                    }
                }
                leave.run();
                event(out, "{\"id\":\"cmpl-" + n + "\",\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}]}");
                event(out, "{\"id\":\"cmpl-" + n + "\",\"choices\":[],\"usage\":{\"prompt_tokens\":" + prompt.length
                        + ",\"completion_tokens\":" + maxTokens + ",\"total_tokens\":" + (prompt.length + maxTokens)
                        + ",\"prompt_tokens_details\":{\"cached_tokens\":" + cached + "}}}");
                event(out, "[DONE]");
            }
        } finally {
            leave.run();
        }
    }

    private static void event(OutputStream out, String data) throws IOException {
        out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static void respond(HttpExchange ex, int status, String json) throws IOException {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
