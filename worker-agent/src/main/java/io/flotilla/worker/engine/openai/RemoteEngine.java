package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.worker.engine.AdapterSupport;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.EngineFeature;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineMeasurements;
import io.flotilla.worker.engine.EngineLoad;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.ResidentBlocks;
import io.flotilla.worker.engine.TimingEstimate;
import io.flotilla.worker.engine.TokenSink;
import io.flotilla.worker.engine.vllm.KvEventCounters;
import io.flotilla.worker.engine.vllm.VllmKvEventFeed;
import io.flotilla.worker.engine.vllm.VllmKvEventSubscriber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * What every adapter in front of an external engine server shares, whatever API it speaks: the HTTP
 * client ({@link EngineHttp}), admission and drain ({@link InFlightRequests}), streaming
 * ({@link CompletionStream}), load and health from the engine's Prometheus endpoint
 * ({@link EngineMetricsScraper}), the engine's ZMQ KV events translated to Flotilla seq hashes
 * (vLLM's wire format, which SGLang also publishes), cache clearing, and the timing learned from its
 * requests ({@link TimingLearner}). A subclass says only how the engine is asked to generate
 * ({@link #generatePath()}, {@link #streamBody}, {@link #decoder}) and what capacity it reports.
 *
 * <p>{@code submit} throws only what it can know at once: an empty prompt or a zero token budget,
 * draining or closed, or more than {@code maxInFlight} requests in flight; HTTP failures reach the sink's
 * {@code onError}. {@link #healthy()} is false until the first good scrape and after the engine stops
 * answering. {@code waitingPrefillTokens} is the prompt length of requests the engine has not started
 * answering. When the engine turns healthy again after an outage its KV view is reset and re-read from
 * the replay buffer, since a restarted engine's hashes mean other blocks.
 */
public abstract class RemoteEngine implements Engine, EngineMeasurements {

    private static final Logger log = LoggerFactory.getLogger(RemoteEngine.class);
    private static final int FORGOTTEN_TRANSLATIONS = 1 << 16;
    /** Samples behind each learned fit (sliding window) and before the first estimate. */
    static final int TIMING_WINDOW = 256;
    static final int TIMING_MIN_SAMPLES = 8;

    protected final OpenAiEngineSettings settings;
    protected final BlockHasher hasher;
    protected final Clock clock;
    protected final String name;
    protected final EngineHttp http;
    protected final InFlightRequests inFlight;
    protected final EngineMetricsScraper scraper;
    private final KvEventCounters kvCounters = new KvEventCounters();
    private final TimingLearner timings = new TimingLearner(TIMING_WINDOW, TIMING_MIN_SAMPLES);
    private final VllmKvEventFeed feed;
    private final VllmKvEventSubscriber subscriber;
    /** The engine's LoRA adapters; null for an engine whose adapter serves none. */
    private final LoraAdapters loras;
    private final AdapterSupport adapterSupport;

    protected RemoteEngine(OpenAiEngineSettings settings, BlockHasher hasher, Clock clock, EngineListeners listeners,
                           String name) {
        this(settings, null, hasher, clock, listeners, name);
    }

    /** @param lora the adapters it may load (vLLM), or null when the engine's API serves no LoRA adapter here */
    protected RemoteEngine(OpenAiEngineSettings settings, LoraSettings lora, BlockHasher hasher, Clock clock,
                           EngineListeners listeners, String name) {
        this.settings = settings;
        this.hasher = hasher;
        this.clock = clock;
        this.name = name;
        this.http = new EngineHttp(settings, name);
        this.inFlight = new InFlightRequests(settings.maxInFlight());
        Duration scrapeTimeout = Duration.ofMillis(Math.max(500, 4 * settings.scrapeInterval().toMillis()));
        this.scraper = new EngineMetricsScraper(http.control(), settings.resolve(settings.metricsPath()),
                settings.resolve(settings.healthPath()), hasher.blockSize(), settings.unhealthyAfter(), scrapeTimeout);
        this.loras = lora == null ? null : new LoraAdapters(http, settings.servedModel(), lora, name, clock,
                listeners.adaptersChanged());
        this.adapterSupport = loras == null ? null : loras::status;
        if (loras != null) {
            scraper.afterGoodRound(loras::discover);
        }
        if (settings.hasKvEvents()) {
            this.feed = new VllmKvEventFeed(hasher, kvCounters, FORGOTTEN_TRANSLATIONS, listeners.kvEvents());
            this.subscriber = new VllmKvEventSubscriber(settings.kvEvents(), settings.kvEventsReplay(),
                    settings.kvEventsTopic(), settings.replayTimeout(), feed, name + "-kv-events");
            // an engine that was down may come back as a new process whose hashes mean other blocks
            scraper.onRecovery(() -> {
                subscriber.requestReset();
                onEngineRecovered();
            });
        } else {
            this.feed = null;
            this.subscriber = null;
            scraper.onRecovery(this::onEngineRecovered);
        }
    }

    /** Starts scraping and the KV event subscription; subclasses call it at the end of their start-up. */
    protected final void startScraping() {
        if (subscriber != null) {
            subscriber.start();
        }
        scraper.start(settings.scrapeInterval(), name + "-scrape");
        log.info("{}: external engine at {} serving '{}' (KV events: {})", name, settings.url(), settings.servedModel(),
                settings.hasKvEvents() ? settings.kvEvents() : "off");
    }

    /** The path generation requests are POSTed to. */
    protected abstract String generatePath();

    /** The streamed generation request's JSON body; {@code kvTransferParams} may be null. */
    protected abstract String streamBody(EngineRequest request, String kvTransferParams);

    /** A decoder for one request's stream. */
    protected abstract ChunkDecoder decoder(EngineRequest request);

    /** Called on the scrape thread when the engine answers again after an outage (it may be a new process). */
    protected void onEngineRecovered() {
        if (loras != null) {
            loras.engineRestarted();
        }
    }

    @Override
    public RequestHandle submit(EngineRequest request, TokenSink sink) {
        return submit(request, null, sink);
    }

    /** Sends a streamed generation; {@code kvTransferParams} goes into the body when the dialect has such a field. */
    protected final RequestHandle submit(EngineRequest request, String kvTransferParams, TokenSink sink) {
        CompletionBody.validate(request);
        String body = streamBody(request, kvTransferParams);
        String adapter = request.scope().loraName();
        Mono<Void> load = adapter.isEmpty() ? null : adapters(adapter).acquire(adapter);
        Runnable releaseAdapter = adapter.isEmpty() ? () -> { } : () -> loras.release(adapter);
        CompletionStream stream = new CompletionStream(request, sink, decoder(request), releaseAdapter,
                () -> inFlight.finished(request.requestId()));
        long mark;
        int before;
        try {
            synchronized (inFlight) {
                before = inFlight.admit(request.requestId(), stream);
                mark = inFlight.admissions();
            }
        } catch (RuntimeException e) {
            releaseAdapter.run();
            throw e;
        }
        if (request.scope().salted() && feed != null) {
            feed.saltedRequestSent();
        }
        // a request that waits for an adapter load is no sample of the engine's prefill time
        stream.timeWith(new RequestClock(before == 0 && load == null, () -> inFlight.admittedSince(mark) == 0,
                () -> scraper.latest().kvUsage(), timings));
        Flux<String> data = http.stream(generatePath(), body, request.requestId());
        if (load != null) {
            data = load.thenMany(data);
        }
        stream.start(data, request.deadline() == null ? null : Duration.between(clock.instant(), request.deadline()));
        return stream;
    }

    /**
     * {@code call} after {@code request}'s adapter is loaded (at once without one), holding the adapter from
     * subscription until the call ends (an unknown adapter fails the Mono); a salted request is noted for the
     * KV event translation.
     */
    protected final <T> Mono<T> withAdapter(EngineRequest request, Mono<T> call) {
        if (request.scope().salted() && feed != null) {
            feed.saltedRequestSent();
        }
        String adapter = request.scope().loraName();
        if (adapter.isEmpty()) {
            return call;
        }
        return Mono.defer(() -> {
            Mono<Void> load = adapters(adapter).acquire(adapter);
            return (load == null ? call : load.then(call)).doFinally(signal -> loras.release(adapter));
        });
    }

    private LoraAdapters adapters(String adapter) {
        if (loras == null) {
            throw new InvalidRequestException("unknown LoRA adapter '" + adapter + "': this worker's engine API serves"
                    + " no LoRA adapter");
        }
        return loras;
    }

    /** {@link AdapterSupport} when LoRA adapters are configured, and what the default finds on this class. */
    @Override
    public <F extends EngineFeature> Optional<F> feature(Class<F> type) {
        return type == AdapterSupport.class ? Optional.ofNullable(adapterSupport).map(type::cast) : Engine.super.feature(type);
    }

    /** Whether the KV events (when there are any) can tell which tenant's salt each stored block was hashed with. */
    protected final boolean kvEventsShowSalts() {
        return feed == null || feed.saltsVisible();
    }

    @Override
    public ResidentBlocks residentBlocks() {
        return feed == null ? new ResidentBlocks(0, new long[0]) : feed.residentBlocks();
    }

    @Override
    public EngineLoad load() {
        EngineMetrics m = scraper.latest();
        long waitingPrefill = 0;
        for (CompletionStream s : inFlight.streams()) {
            if (!s.generating()) {
                waitingPrefill += s.request().promptTokens().length;
            }
        }
        int total = reportedKvBlocks();
        int active = (int) Math.round(m.kvUsage() * total);
        return new EngineLoad(m.running(), m.waiting(), waitingPrefill, active, total, 0);
    }

    /** Capacity from the metrics ({@code num_gpu_blocks} × the engine's block size, in Flotilla blocks). */
    @Override
    public int reportedKvBlocks() {
        EngineMetrics m = scraper.latest();
        if (m.totalKvBlocks() <= 0) {
            return 0;
        }
        int engineBlock = m.engineBlockSize() > 0 ? m.engineBlockSize() : hasher.blockSize();
        return (int) ((long) m.totalKvBlocks() * engineBlock / hasher.blockSize());
    }

    @Override
    public Optional<TimingEstimate> learnedTiming() {
        return timings.estimate();
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
            HttpResponse<String> resp = http.controlCall(settings.clearCachePath(), true, Duration.ofSeconds(10));
            if (resp.statusCode() / 100 == 2) {
                return before;
            }
            log.warn("engine refused to clear its cache: {} {}", resp.statusCode(), EngineHttpErrors.message(resp.body()));
        } catch (IOException e) {
            log.warn("cannot reach the engine to clear its cache: {}", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /** False until the engine has answered health and metrics once, and after it stops answering. */
    @Override
    public boolean healthy() {
        return !inFlight.isClosed() && scraper.healthy();
    }

    @Override
    public CompletableFuture<Void> drain() {
        return inFlight.drain();
    }

    @Override
    public void close() {
        List<CompletionStream> open = inFlight.close();
        open.forEach(s -> s.fail(new EngineUnavailableException("engine adapter closed")));
        scraper.close();
        if (subscriber != null) {
            subscriber.close();
        }
        http.close();
        inFlight.completeDrain();
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

    /** Requests in flight to the engine (admitted, not yet finished). */
    public int inFlight() {
        return inFlight.streams().size();
    }

    /** The samples behind the learned timing: {prefill, decode}. */
    public int[] timingSamples() {
        return timings.samples();
    }

    public OpenAiEngineSettings settings() {
        return settings;
    }
}
