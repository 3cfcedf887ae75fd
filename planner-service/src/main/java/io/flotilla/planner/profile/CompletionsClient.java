package io.flotilla.planner.profile;

import io.flotilla.protocol.sse.SseDecoder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * {@link CompletionProbe} against a gateway's OpenAI-compatible {@code POST /v1/completions}: token-id
 * prompt, {@code stream: true} with {@code stream_options.include_usage}, {@code ignore_eos: true},
 * {@code temperature: 0}. TTFT = first SSE chunk with a choice and no finish reason; ITL = (last such
 * chunk − first) / (completion tokens − 1), completion tokens from the usage chunk (else the chunks).
 */
public final class CompletionsClient implements CompletionProbe {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpClient http;
    private final URI endpoint;
    private final String model;
    private final Duration timeout;
    private final LongSupplier nanoTime;

    public CompletionsClient(URI gateway, String model, Duration timeout, LongSupplier nanoTime) {
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).version(HttpClient.Version.HTTP_1_1).build();
        this.endpoint = gateway.resolve("/v1/completions");
        this.model = model;
        this.timeout = timeout;
        this.nanoTime = nanoTime;
    }

    @Override
    public Measurement measure(int[] prompt, int maxTokens) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", model);
        body.put("prompt", prompt);
        body.put("max_tokens", maxTokens);
        body.put("stream", true);
        body.put("stream_options", Map.of("include_usage", true));
        body.put("ignore_eos", true);
        body.put("temperature", 0);
        HttpRequest request = HttpRequest.newBuilder(endpoint).timeout(timeout)
                .header("Content-Type", "application/json").header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build();
        long start = nanoTime.getAsLong();
        HttpResponse<Stream<String>> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofLines());
        } catch (IOException e) {
            throw new UncheckedIOException("POST " + endpoint + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (response.statusCode() != 200) {
            String text = String.join("\n", response.body().toList());
            throw new IllegalStateException("POST " + endpoint + " answered " + response.statusCode() + ": " + text);
        }
        Chunks chunks = new Chunks();
        SseDecoder sse = new SseDecoder(chunks);
        try (Stream<String> lines = response.body()) {
            for (String line : (Iterable<String>) lines::iterator) {
                sse.line(line, line.isEmpty() ? 0 : nanoTime.getAsLong()); // a blank line only dispatches
                if (chunks.done) {
                    break;
                }
            }
        }
        sse.end();
        int tokens = chunks.usageTokens >= 0 ? chunks.usageTokens : chunks.count;
        if (chunks.first < 0) {
            return new Measurement(Double.NaN, 0, tokens);
        }
        double ttft = (chunks.first - start) / 1e6;
        double itl = tokens > 1 ? (chunks.last - chunks.first) / 1e6 / (tokens - 1) : 0;
        return new Measurement(ttft, itl, tokens);
    }

    /** The stream's chunks as they arrive: when the first and last token came, and the usage's count. */
    private static final class Chunks implements SseDecoder.Listener {
        long first = -1;
        long last = -1;
        int count;
        int usageTokens = -1;
        boolean done;

        @Override
        public void onEvent(String type, String data, long receivedNanos) {
            if (done || data.equals("[DONE]")) {
                done = true;
                return;
            }
            JsonNode chunk = JSON.readTree(data);
            JsonNode usage = chunk.get("usage");
            if (usage != null && usage.isObject() && usage.has("completion_tokens")) {
                usageTokens = usage.get("completion_tokens").asInt();
            }
            JsonNode choices = chunk.get("choices");
            if (choices == null || choices.isEmpty()) {
                return;
            }
            JsonNode finish = choices.get(0).get("finish_reason");
            if (finish != null && !finish.isNull()) {
                return;
            }
            if (first < 0) {
                first = receivedNanos;
            }
            last = receivedNanos;
            count++;
        }
    }
}
