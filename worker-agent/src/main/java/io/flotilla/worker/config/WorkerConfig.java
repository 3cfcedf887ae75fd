package io.flotilla.worker.config;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.kafka.boot.KafkaClients;
import io.flotilla.kafka.boot.KafkaTopicUse;
import io.flotilla.protocol.kafka.ProtoProducers;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.EngineTiming;
import io.flotilla.worker.agent.EngineFactory;
import io.flotilla.worker.agent.WorkerFleet;
import io.flotilla.worker.agent.WorkerInstance;
import io.flotilla.worker.agent.WorkerMetrics;
import io.flotilla.worker.engine.openai.ExternalEngineMeters;
import io.flotilla.worker.engine.openai.LoraSettings;
import io.flotilla.worker.engine.openai.OpenAiEngineSettings;
import io.flotilla.worker.engine.openai.OpenAiHttpEngine;
import io.flotilla.worker.engine.openai.RemoteEngine;
import io.flotilla.worker.engine.llamacpp.LlamaCppEngine;
import io.flotilla.worker.engine.llamacpp.LlamaCppMeters;
import io.flotilla.worker.engine.llamacpp.LlamaCppSettings;
import io.flotilla.worker.engine.llamacpp.NativeDirs;
import io.flotilla.worker.engine.sglang.SglangEngine;
import io.flotilla.worker.engine.sim.ProfileFit;
import io.flotilla.worker.engine.sim.SimAdapters;
import io.flotilla.worker.engine.sim.SimScript;
import io.flotilla.worker.engine.sim.SimulatedEngine;
import io.flotilla.worker.engine.sim.TimingModel;
import io.flotilla.worker.kvbm.DirectMemory;
import io.flotilla.worker.kvbm.TierSettings;
import io.flotilla.worker.settings.WorkerProperties;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/** Wires the worker fleet: one shared Kafka producer and scheduler, one engine per worker. */
@Configuration(proxyBeanMethods = false)
class WorkerConfig {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(WorkerConfig.class);

    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }

    /**
     * One producer for every worker of the JVM. It never blocks a caller for more than
     * {@code max.block.ms} when Kafka is down; undelivered records expire after the delivery timeout
     * and show up as publish errors (and, for KV events, as gaps the indexer repairs).
     */
    @Bean(destroyMethod = "close")
    Producer<String, Object> workerProducer(KafkaClients kafka) {
        return ProtoProducers.create(kafka.producer(), "flotilla-worker", 1000, Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                // one request in flight keeps each worker's batches in order across retries
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1));
    }

    /**
     * Membership heartbeats and load reports, apart from KV events so that they can linger
     * ({@code flotilla.worker.report-linger-ms}): they are state sampled every few hundred milliseconds, and co-hosted
     * workers' reports then reach the broker in one request per linger instead of one every few milliseconds.
     */
    @Bean(destroyMethod = "close")
    Producer<String, Object> reportProducer(KafkaClients kafka, WorkerProperties properties) {
        return ProtoProducers.create(kafka.producer(), "flotilla-worker-reports", 1000, Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1,
                ProducerConfig.LINGER_MS_CONFIG, properties.reportLingerMs()));
    }

    /** Workers write membership, load and KV events, and serve without Kafka (outside readiness). */
    @Bean
    KafkaTopicUse workerKafkaTopics() {
        return KafkaTopicUse.producerOnly(List.of(Topics.WORKERS, Topics.WORKER_LOAD, Topics.KV_EVENTS));
    }

    @Bean(destroyMethod = "shutdownNow")
    ScheduledExecutorService workerScheduler() {
        return Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "worker-reports");
            t.setDaemon(true);
            return t;
        });
    }

    @Bean
    TimingModel timingModel(WorkerProperties properties) {
        String profile = properties.sim().profile();
        if (profile == null || profile.isBlank()) {
            return TimingModel.DEFAULT;
        }
        try {
            String text = java.nio.file.Files.readString(Path.of(profile));
            if (ProfileFit.isProfile(text)) {
                ProfileFit.Fit fit = ProfileFit.fit(text);
                log.info("simulated timing fitted to the measured profile {}: {} (prefill RMS {} ms over {} points, decode "
                        + "RMS {} ms over {} points)", profile, fit.model(), String.format("%.2f", fit.prefillRmsMs()),
                        fit.prefillPoints(), String.format("%.2f", fit.decodeRmsMs()), fit.decodePoints());
                return fit.model();
            }
            return TimingModel.parse(text);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read timing profile " + profile + ": " + e.getMessage(), e);
        }
    }

    /** The engine each worker runs in front of: {@code flotilla.worker.engine} = sim or openai-http. */
    @Bean
    EngineFactory engineFactory(WorkerProperties properties, TimingModel timing, Clock clock, MeterRegistry registry) {
        if ("llama-cpp".equals(properties.engine())) {
            return llamaCppEngineFactory(properties, clock, registry);
        }
        if (!"sim".equals(properties.engine())) {
            return externalEngineFactory(properties, clock, registry);
        }
        WorkerProperties.Sim sim = properties.sim();
        WorkerProperties.Kvbm kvbm = properties.kvbm();
        if (kvbm.hostBytes().toBytes() > 0) {
            if (sim.kvBytesPerBlock() == 0) {
                throw new IllegalStateException("flotilla.worker.kvbm tiers move KV payloads: set "
                        + "flotilla.worker.sim.kv-bytes-per-block > 0");
            }
            long perWorker = kvbm.hostBytes().toBytes() + (long) sim.totalBlocks() * sim.kvBytesPerBlock();
            DirectMemory.require(perWorker * properties.instances(), properties.instances()
                    + " worker(s) with a host KV tier of " + kvbm.hostBytes() + " and their device pools");
        }
        SimScript script = sim.script() == null ? null : SimScript.load(sim.script());
        return (identity, index, listeners) -> SimulatedEngine.startRealTime(sim.engineConfig()
                .namespace(identity.namespace())
                .timing(timing)
                .adapters(new SimAdapters(properties.lora().adapters(), properties.lora().maxLoaded(),
                        properties.lora().loadMs()))
                .tiers(kvbm.hostBytes().toBytes() > 0 ? kvbm.settings(identity.id()) : TierSettings.OFF)
                .build(), script, listeners, identity.id() + "-engine");
    }

    /**
     * An adapter in front of the external engine server {@code flotilla.worker.http} names: vLLM's
     * OpenAI-compatible API ({@code openai-http}) or SGLang's native one ({@code sglang}). It hashes with the
     * worker's namespace and block size, so its KV events carry the seq hashes the gateway computes; one
     * worker per engine server. Its meters join the worker's.
     */
    private static EngineFactory externalEngineFactory(WorkerProperties properties, Clock clock, MeterRegistry registry) {
        if (properties.instances() != 1) {
            throw new IllegalStateException("flotilla.worker.engine=" + properties.engine() + " fronts one engine server per worker;"
                    + " set flotilla.worker.instances=1 (got " + properties.instances() + ")");
        }
        WorkerProperties.Http http = properties.http();
        String served = http.servedModel() == null || http.servedModel().isBlank() ? properties.model() : http.servedModel();
        OpenAiEngineSettings settings = new OpenAiEngineSettings(URI.create(http.url()), served, http.kvEvents(),
                http.kvEventsReplay(), http.kvEventsTopic(), http.metricsPath(), http.healthPath(), properties.clearCachePath(),
                Duration.ofMillis(http.scrapeIntervalMs()), http.unhealthyAfter(), Duration.ofMillis(http.connectTimeoutMs()),
                Duration.ofMillis(http.requestTimeoutMs()), Duration.ofMillis(http.replayTimeoutMs()), http.maxInFlight(),
                http.returnTokenIds());
        boolean sglang = "sglang".equals(properties.engine());
        if (sglang && http.embeddingDimensions() > 0) {
            throw new IllegalStateException("flotilla.worker.http.embedding-dimensions: embeddings are passed through to "
                    + "vLLM (engine openai-http) only, not to SGLang");
        }
        OpenAiHttpEngine.Pooling pooling = http.embeddingDimensions() > 0
                ? new OpenAiHttpEngine.Pooling(http.embeddingDimensions(), http.embeddingTruncatable()) : null;
        return (identity, index, listeners) -> {
            BlockHasher hasher = new BlockHasher(identity.namespace(), identity.blockSize());
            RemoteEngine engine = sglang
                    ? SglangEngine.start(settings, http.serverInfoPath(), hasher, clock, listeners, identity.id() + "-engine")
                    : OpenAiHttpEngine.start(settings, new LoraSettings(properties.lora().paths(),
                            properties.lora().maxLoaded(), properties.lora().loadMs()), pooling, hasher, clock, listeners,
                            identity.id() + "-engine");
            ExternalEngineMeters.bind(engine, registry, WorkerMetrics.tagsOf(identity));
            return engine;
        };
    }

    /**
     * llama.cpp in this process ({@code flotilla.worker.llama}): one engine per worker, each with its own model copy
     * and slots, hashing with the worker's namespace and block size.
     */
    private static EngineFactory llamaCppEngineFactory(WorkerProperties properties, Clock clock, MeterRegistry registry) {
        WorkerProperties.Llama llama = properties.llama();
        if (properties.instances() != 1) { // each engine's log names its slots 0..n-1: one engine per process
            throw new IllegalStateException("flotilla.worker.engine=llama-cpp runs one engine per worker process; set "
                    + "flotilla.worker.instances=1 (got " + properties.instances() + ")");
        }
        if (llama.gguf() == null || llama.gguf().isBlank()) {
            throw new IllegalStateException("flotilla.worker.engine=llama-cpp needs flotilla.worker.llama.gguf (a GGUF "
                    + "model file; bin/flotilla model tiny --out DIR writes one)");
        }
        java.nio.file.Path nativeDir = llama.nativeDir() == null || llama.nativeDir().isBlank()
                ? NativeDirs.ownPrivate(java.nio.file.Path.of(System.getProperty("java.io.tmpdir")))
                : java.nio.file.Path.of(llama.nativeDir());
        LlamaCppSettings settings = new LlamaCppSettings(java.nio.file.Path.of(llama.gguf()), llama.slots(), llama.threads(),
                llama.contextPerSlot(), llama.maxWaiting(), nativeDir);
        return (identity, index, listeners) -> {
            LlamaCppEngine engine = LlamaCppEngine.start(settings, new BlockHasher(identity.namespace(), identity.blockSize()),
                    clock, listeners, identity.id() + "-engine");
            LlamaCppMeters.bind(engine, registry, WorkerMetrics.tagsOf(identity));
            return engine;
        };
    }

    @Bean
    WorkerFleet workerFleet(WorkerProperties properties, EngineFactory engines,
                            @Qualifier("workerProducer") Producer<String, Object> workerProducer,
                            @Qualifier("reportProducer") Producer<String, Object> reportProducer,
                            ScheduledExecutorService workerScheduler, MeterRegistry registry, Clock clock,
                            @Value("${server.port}") int managementPort, TimingModel timing,
                            ObservationRegistry observations) {
        EngineTiming advertised = EngineTiming.newBuilder()
                .setPrefillA(timing.prefillA()).setPrefillB(timing.prefillB()).setPrefillC(timing.prefillC())
                .setDecodeD2(timing.decodeA()).setDecodeD1(timing.decodeB()).setDecodeD0(timing.decodeC())
                .setSpeedup(properties.sim().speedup())
                .build();
        return new WorkerFleet(properties, engines, workerProducer, reportProducer, workerScheduler, registry, clock, managementPort, advertised,
                observations);
    }

    /** Readiness: every worker of the JVM serves gRPC and is READY. */
    @Bean
    HealthIndicator workersHealthIndicator(WorkerFleet fleet) {
        return () -> {
            var workers = fleet.workers();
            Health.Builder b = workers.isEmpty() || !workers.stream().allMatch(WorkerInstance::serving)
                    ? Health.outOfService() : Health.up();
            workers.forEach(w -> b.withDetail(w.identity().id(), Map.of("state", w.state().name(), "grpcPort", w.grpcPort(),
                    "epoch", Long.toUnsignedString(w.identity().epoch()))));
            return b.build();
        };
    }
}
