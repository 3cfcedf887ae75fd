package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.worker.engine.DeadlineExceededException;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.EngineException;
import io.flotilla.worker.engine.EngineKvTransfer;
import io.flotilla.worker.engine.EngineLoad;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.KvEventListener;
import io.flotilla.worker.engine.RemotePrefill;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.ResidentBlocks;
import io.flotilla.worker.engine.TokenSink;
import io.flotilla.worker.engine.vllm.KvEventCounters;
import io.flotilla.worker.engine.vllm.VllmKvEventFeed;
import io.flotilla.worker.engine.vllm.VllmKvEventSubscriber;
import io.netty.channel.ChannelOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An {@link Engine} in front of an external vLLM or SGLang server, through its OpenAI-compatible
 * HTTP API, its Prometheus endpoint and (optionally) its ZMQ KV event publisher.
 *
 * <ul>
 *   <li>Requests: {@code POST /v1/completions} with the token-id prompt, streamed (see
 *       {@link CompletionBody}, {@link CompletionStream}); HTTP failures map as
 *       {@link EngineHttpErrors} says and reach the sink's {@code onError}. {@code submit} itself
 *       throws only what it can know at once: an empty prompt or a zero token budget, draining or
 *       closed, or more than {@code maxInFlight} requests in flight.</li>
 *   <li>Load and health: scraped every {@code scrapeInterval} ({@link EngineMetricsScraper});
 *       {@link #healthy()} is false until the first good round and after the engine stops answering.
 *       {@code waitingPrefillTokens} is the prompt length of requests the engine has not started
 *       answering; {@code lastStepMs} is always 0 (a remote server's steps are not observable).</li>
 *   <li>KV events: translated to Flotilla seq hashes ({@link VllmKvEventFeed}); without a
 *       configured endpoint the worker reports an empty cache. The subscription starts when the
 *       listener is set. When the engine turns healthy again after an outage its KV view is reset
 *       and re-read from the replay buffer, since a restarted engine's hashes mean other blocks.</li>
 * </ul>
 */
public final class OpenAiHttpEngine implements Engine, EngineKvTransfer {

    private static final Logger log = LoggerFactory.getLogger(OpenAiHttpEngine.class);
    private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE = new ParameterizedTypeReference<>() {
    };
    private static final int FORGOTTEN_TRANSLATIONS = 1 << 16;

    private final OpenAiEngineSettings settings;
    private final BlockHasher hasher;
    private final Clock clock;
    private final ConnectionProvider connections;
    private final WebClient web;
    private final java.net.http.HttpClient admin;
    private final EngineMetricsScraper scraper;
    private final KvEventCounters kvCounters = new KvEventCounters();
    private final VllmKvEventFeed feed;
    private final VllmKvEventSubscriber subscriber;
    private final Map<String, CompletionStream> inFlight = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> drained = new CompletableFuture<>();
    private boolean draining;
    private volatile boolean closed;
    private boolean subscribed;

    private OpenAiHttpEngine(OpenAiEngineSettings settings, BlockHasher hasher, Clock clock, String name) {
        this.settings = settings;
        this.hasher = hasher;
        this.clock = clock;
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
        this.admin = java.net.http.HttpClient.newBuilder().version(java.net.http.HttpClient.Version.HTTP_1_1)
                .connectTimeout(settings.connectTimeout()).build();
        Duration scrapeTimeout = Duration.ofMillis(Math.max(500, 4 * settings.scrapeInterval().toMillis()));
        this.scraper = new EngineMetricsScraper(admin, settings.resolve(settings.metricsPath()),
                settings.resolve(settings.healthPath()), hasher.blockSize(), settings.unhealthyAfter(), scrapeTimeout);
        if (settings.hasKvEvents()) {
            this.feed = new VllmKvEventFeed(hasher, kvCounters, FORGOTTEN_TRANSLATIONS);
            this.subscriber = new VllmKvEventSubscriber(settings.kvEvents(), settings.kvEventsReplay(),
                    settings.kvEventsTopic(), settings.replayTimeout(), feed, name + "-kv-events");
            // an engine that was down may come back as a new process whose hashes mean other blocks
            scraper.onRecovery(subscriber::requestReset);
        } else {
            this.feed = null;
            this.subscriber = null;
        }
    }

    /** An adapter for the engine server {@code settings} names, scraping it from now on. */
    public static OpenAiHttpEngine start(OpenAiEngineSettings settings, BlockHasher hasher, Clock clock, String name) {
        OpenAiHttpEngine engine = new OpenAiHttpEngine(settings, hasher, clock, name);
        engine.scraper.start(settings.scrapeInterval(), name + "-scrape");
        log.info("{}: external engine at {} serving '{}' (KV events: {})", name, settings.url(), settings.servedModel(),
                settings.hasKvEvents() ? settings.kvEvents() : "off");
        return engine;
    }

    @Override
    public RequestHandle submit(EngineRequest request, TokenSink sink) {
        return submitWithKvTransfer(request, null, sink);
    }

    /**
     * Like {@link #submit} for the decode side of a disaggregated request: {@code kvTransferParams}
     * (a JSON object, from the prefill engine's {@link RemotePrefill#kvTransferParams()}) goes into the
     * request as {@code kv_transfer_params}, so the engine pulls the prompt's KV instead of computing it.
     * Null behaves like {@link #submit}.
     *
     * @throws InvalidRequestException also when {@code kvTransferParams} is not a JSON object
     */
    @Override
    public RequestHandle submitWithKvTransfer(EngineRequest request, String kvTransferParams, TokenSink sink) {
        CompletionBody.validate(request);
        String body = CompletionBody.stream(settings.servedModel(), request, settings.returnTokenIds(), kvTransferParams);
        CompletionStream stream = new CompletionStream(request, sink, () -> finished(request.requestId()));
        admit(request.requestId(), stream);
        Flux<String> data = web.post().uri(settings.resolve("/v1/completions"))
                .contentType(MediaType.APPLICATION_JSON).accept(MediaType.TEXT_EVENT_STREAM)
                .header("X-Request-Id", request.requestId())
                .bodyValue(body)
                .exchangeToFlux(resp -> resp.statusCode().is2xxSuccessful()
                        ? resp.bodyToFlux(SSE).mapNotNull(ServerSentEvent::data)
                        : OpenAiHttpEngine.<String>errorBody(resp).flux());
        stream.start(data, request.deadline() == null ? null : Duration.between(clock.instant(), request.deadline()));
        return stream;
    }

    /**
     * Runs the prefill of {@code request} on this engine for a decode on another engine (vLLM
     * {@code kv_transfer_params} protocol: {@code do_remote_decode}, {@code max_tokens: 1}, not
     * streamed). The engine keeps the prompt's KV for the decode engine to pull.
     *
     * @return completes with the engine's {@code kv_transfer_params}, or exceptionally with an
     *         {@link EngineException} (also when the engine returns no params: it was started without
     *         a KV connector); cancelling the future closes the HTTP request
     */
    @Override
    public CompletableFuture<RemotePrefill> prefillRemote(EngineRequest request) {
        CompletionBody.validate(request);
        synchronized (this) {
            if (draining) {
                throw new EngineUnavailableException(closed ? "engine adapter closed" : "engine is draining");
            }
        }
        String body = CompletionBody.remotePrefill(settings.servedModel(), request, settings.returnTokenIds());
        Mono<RemotePrefill> result = web.post().uri(settings.resolve("/v1/completions"))
                .contentType(MediaType.APPLICATION_JSON)
                .header("X-Request-Id", request.requestId())
                .bodyValue(body)
                .exchangeToMono(resp -> resp.statusCode().is2xxSuccessful()
                        ? resp.bodyToMono(String.class).map(OpenAiHttpEngine::remotePrefill)
                        : OpenAiHttpEngine.<RemotePrefill>errorBody(resp));
        if (request.deadline() != null) {
            Duration left = Duration.between(clock.instant(), request.deadline());
            if (left.isNegative() || left.isZero()) {
                return CompletableFuture.failedFuture(new DeadlineExceededException("deadline passed before the prefill was sent"));
            }
            result = result.timeout(left, Mono.error(() -> new DeadlineExceededException("deadline passed during remote prefill")));
        }
        return result.onErrorMap(e -> !(e instanceof EngineException), EngineHttpErrors::forFailure).toFuture();
    }

    /** Reads the engine's non-streamed prefill response; throws an {@code EngineException} for errors or missing params. */
    static RemotePrefill remotePrefill(String json) {
        CompletionChunk c = CompletionChunk.parse(json);
        if (c.error() != null) {
            throw c.error();
        }
        if (c.kvTransferParams() == null) {
            throw new EngineUnavailableException("engine returned no kv_transfer_params; is it started with --kv-transfer-config?");
        }
        CompletionChunk.Usage u = c.usage() == null ? new CompletionChunk.Usage(0, 0, 0) : c.usage();
        return new RemotePrefill(c.kvTransferParams(), c.tokenIds() == null ? new int[0] : c.tokenIds(),
                u.promptTokens(), u.cachedTokens());
    }

    private static <T> Mono<T> errorBody(ClientResponse resp) {
        int status = resp.statusCode().value();
        return resp.bodyToMono(String.class).defaultIfEmpty("")
                .flatMap(b -> Mono.error(EngineHttpErrors.forStatus(status, b)));
    }

    private synchronized void admit(String id, CompletionStream stream) {
        if (draining) {
            throw new EngineUnavailableException(closed ? "engine adapter closed" : "engine is draining");
        }
        if (inFlight.size() >= settings.maxInFlight()) {
            throw new EngineOverloadedException(inFlight.size() + " requests in flight to the engine (max "
                    + settings.maxInFlight() + ")");
        }
        if (inFlight.putIfAbsent(id, stream) != null) {
            throw new InvalidRequestException("request id " + id + " is already in flight");
        }
    }

    private synchronized void finished(String id) {
        inFlight.remove(id);
        if (draining && inFlight.isEmpty()) {
            drained.complete(null);
        }
    }

    /** What vLLM's and SGLang's completions endpoints honour ({@link CompletionBody#CAPABILITIES}). */
    @Override
    public io.flotilla.protocol.v1.EngineCapabilities capabilities() {
        return CompletionBody.CAPABILITIES;
    }

    /** vLLM's {@code kv_transfer_params} protocol; whether the engine has a KV connector shows per request. */
    @Override
    public Optional<EngineKvTransfer> engineKvTransfer() {
        return Optional.of(this);
    }

    @Override
    public ResidentBlocks residentBlocks() {
        return feed == null ? new ResidentBlocks(0, new long[0]) : feed.residentBlocks();
    }

    @Override
    public EngineLoad load() {
        EngineMetrics m = scraper.latest();
        long waitingPrefill = 0;
        for (CompletionStream s : inFlight.values()) {
            if (!s.generating()) {
                waitingPrefill += s.request().promptTokens().length;
            }
        }
        return new EngineLoad(m.running(), m.waiting(), waitingPrefill, m.activeKvBlocks(), m.totalKvBlocks(), 0);
    }

    @Override
    public int blockSize() {
        return hasher.blockSize();
    }

    /**
     * Asks the engine to drop its prefix cache ({@code POST clearCachePath}: vLLM's
     * {@code /reset_prefix_cache}, which needs {@code VLLM_SERVER_DEV_MODE=1}; SGLang's
     * {@code /flush_cache}). The matching events arrive later over the KV event stream.
     *
     * @return the translated resident block count before the call when the engine accepted it, else 0
     */
    @Override
    public int clearCache() {
        int before = feed == null ? 0 : feed.residentBlocks().count();
        try {
            HttpResponse<String> resp = admin.send(HttpRequest.newBuilder(settings.resolve(settings.clearCachePath()))
                    .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (resp.statusCode() / 100 == 2) {
                return before;
            }
            log.warn("engine refused to clear its cache: {} {}", resp.statusCode(), EngineHttpErrors.message(resp.body()));
        } catch (java.io.IOException e) {
            log.warn("cannot reach the engine to clear its cache: {}", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    @Override
    public synchronized void setKvEventListener(KvEventListener listener) {
        if (feed == null) {
            return;
        }
        feed.setListener(listener);
        if (!subscribed && !closed) {
            subscribed = true;
            subscriber.start();
        }
    }

    /** False until the engine has answered health and metrics once, and after it stops answering. */
    @Override
    public boolean healthy() {
        return !closed && scraper.healthy();
    }

    @Override
    public synchronized CompletableFuture<Void> drain() {
        draining = true;
        if (inFlight.isEmpty()) {
            drained.complete(null);
        }
        return drained;
    }

    @Override
    public void close() {
        List<CompletionStream> open;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            draining = true;
            open = List.copyOf(inFlight.values());
        }
        open.forEach(s -> s.fail(new EngineUnavailableException("engine adapter closed")));
        scraper.close();
        if (subscriber != null) {
            subscriber.close();
        }
        connections.dispose();
        drained.complete(null);
    }

    /** Translation and repair counters of the KV event stream (all zero without KV events). */
    public KvEventCounters kvEventCounters() {
        return kvCounters;
    }

    /** The last scraped engine metrics. */
    public EngineMetrics engineMetrics() {
        return scraper.latest();
    }

    /** Health and metrics scrape rounds that failed, and health checks answered with a status other than 200. */
    public EngineMetricsScraper scraper() {
        return scraper;
    }

    public OpenAiEngineSettings settings() {
        return settings;
    }
}
