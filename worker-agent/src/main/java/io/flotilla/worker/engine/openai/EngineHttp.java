package io.flotilla.worker.engine.openai;

import io.netty.channel.ChannelOption;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The one HTTP client setup of every external engine adapter: a Reactor Netty pool sized to the in-flight
 * limit for generation requests (streamed as server-sent events, parsed by Spring's SSE codec, so no
 * adapter parses SSE itself), and a small blocking JDK client for control calls (health, metrics, server
 * information, cache clearing) that must not compete with generation for pooled connections.
 */
public final class EngineHttp implements AutoCloseable {

    private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE = new ParameterizedTypeReference<>() {
    };

    private final OpenAiEngineSettings settings;
    private final ConnectionProvider connections;
    private final WebClient web;
    private final java.net.http.HttpClient control;

    public EngineHttp(OpenAiEngineSettings settings, String name) {
        this.settings = settings;
        this.connections = ConnectionProvider.builder(name + "-http")
                .maxConnections(settings.maxInFlight() + 8)
                .pendingAcquireMaxCount(-1)
                .build();
        HttpClient http = HttpClient.create(connections)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) settings.connectTimeout().toMillis())
                .responseTimeout(settings.requestTimeout());
        this.web = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(http))
                .codecs(c -> c.defaultCodecs().maxInMemorySize(16 << 20))
                .build();
        this.control = java.net.http.HttpClient.newBuilder().version(java.net.http.HttpClient.Version.HTTP_1_1)
                .connectTimeout(settings.connectTimeout()).build();
    }

    /** The blocking client for control calls. */
    public java.net.http.HttpClient control() {
        return control;
    }

    /**
     * POSTs {@code json} to {@code path} and streams the SSE {@code data:} payloads; an HTTP error status
     * becomes the {@link EngineHttpErrors} exception for it.
     */
    public Flux<String> stream(String path, String json, String requestId) {
        return web.post().uri(settings.resolve(path))
                .contentType(MediaType.APPLICATION_JSON).accept(MediaType.TEXT_EVENT_STREAM)
                .header("X-Request-Id", requestId)
                .headers(EngineHttp::traceContext)
                .bodyValue(json)
                .exchangeToFlux(resp -> resp.statusCode().is2xxSuccessful()
                        ? resp.bodyToFlux(SSE).mapNotNull(ServerSentEvent::data)
                        : EngineHttp.<String>errorBody(resp).flux());
    }

    /** POSTs {@code json} to {@code path} and reads the whole response body. */
    public Mono<String> call(String path, String json, String requestId) {
        return web.post().uri(settings.resolve(path))
                .contentType(MediaType.APPLICATION_JSON)
                .header("X-Request-Id", requestId)
                .headers(EngineHttp::traceContext)
                .bodyValue(json)
                .exchangeToMono(resp -> resp.statusCode().is2xxSuccessful()
                        ? resp.bodyToMono(String.class)
                        : EngineHttp.<String>errorBody(resp));
    }

    /** A blocking control call: {@code POST} without body when {@code post}, else {@code GET}. */
    public HttpResponse<String> controlCall(String path, boolean post, Duration timeout)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(settings.resolve(path)).timeout(timeout);
        b = post ? b.POST(HttpRequest.BodyPublishers.noBody()) : b.GET();
        return control.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * The calling thread's span as W3C {@code traceparent}/{@code tracestate}, so the engine's own
     * OpenTelemetry spans (vLLM's and SGLang's servers read {@code traceparent}) join the request's trace.
     * The worker submits with the engine observation in scope, and Micrometer's OpenTelemetry bridge keeps
     * the current span in OpenTelemetry's context, so the API's W3C propagator reads it without a bean; with
     * tracing off no span is current and nothing is added. Read when the request is built, on the submitting
     * thread, not when Reactor subscribes.
     */
    static void traceContext(HttpHeaders headers) {
        W3CTraceContextPropagator.getInstance().inject(Context.current(), headers, (h, key, value) -> h.set(key, value));
    }

    private static <T> Mono<T> errorBody(ClientResponse resp) {
        int status = resp.statusCode().value();
        return resp.bodyToMono(String.class).defaultIfEmpty("")
                .flatMap(b -> Mono.error(EngineHttpErrors.forStatus(status, b)));
    }

    @Override
    public void close() {
        connections.dispose();
    }
}
