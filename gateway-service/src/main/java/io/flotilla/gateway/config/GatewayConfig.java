package io.flotilla.gateway.config;

import io.flotilla.gateway.admission.AdmissionControl;
import io.flotilla.gateway.client.KafkaRecordSink;
import io.flotilla.gateway.client.ModelCatalog;
import io.flotilla.gateway.client.RequestRecordPublisher;
import io.flotilla.gateway.client.RequestRecordSink;
import io.flotilla.gateway.client.RouterClient;
import io.flotilla.gateway.client.WorkerClient;
import io.flotilla.gateway.generation.GenerationPipeline;
import io.flotilla.gateway.generation.JobFactory;
import io.flotilla.gateway.generation.ModelProfiles;
import io.flotilla.gateway.generation.RequestAccounting;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.tokenize.ChatMlTemplate;
import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import io.flotilla.gateway.tokenize.ModelTokenizations;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.flotilla.kafka.boot.KafkaClients;
import io.flotilla.protocol.hash.KvNamespace;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import io.flotilla.kafka.boot.KafkaTopicUse;
import io.flotilla.protocol.kafka.Topics;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Schedulers;

import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Wires the request path: router and worker clients, model catalog and profiles, admission, records. */
@Configuration(proxyBeanMethods = false)
class GatewayConfig {

    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }

    /**
     * One channel to the router; connecting starts at once so the first Route does not pay for it.
     * Answers are handled on the channel's own I/O thread ({@code directExecutor}): what runs on
     * them (routing the next call, writing to the client) never blocks, and skipping the hop to an
     * executor thread saves a thread wake-up per call.
     */
    @Bean(destroyMethod = "shutdownNow")
    ManagedChannel routerChannel(GatewayProperties properties) {
        ManagedChannel channel = NettyChannelBuilder.forTarget(properties.routerAddress())
                .usePlaintext()
                .directExecutor()
                .keepAliveTime(30, TimeUnit.SECONDS)
                .build();
        channel.getState(true);
        return channel;
    }

    @Bean
    RouterClient routerClient(ManagedChannel routerChannel, GatewayProperties properties) {
        return new RouterClient(routerChannel, properties.routeTimeout(), properties.routerCallTimeout());
    }

    @Bean(destroyMethod = "close")
    WorkerClient workerClient(GatewayProperties properties) {
        return new WorkerClient(properties.prefillTimeout());
    }

    /**
     * The served models, each checked against its workers' block-hash namespace: the tokenizer (configured,
     * or adopted from the workers' registration, see {@link ModelTokenizations#reconcile}) and the KV layout.
     */
    @Bean
    ModelCatalog modelCatalog(RouterClient router, Clock clock, GatewayProperties properties,
                              ModelTokenizations tokenizations) {
        return new ModelCatalog(router, clock, properties.modelsCacheTtl(), (model, blockSize, tokenizerId, source, layout) -> {
            String configured = properties.model(model).kvLayout();
            String mine = configured == null || configured.isBlank() ? KvNamespace.pagedLayout("bf16", blockSize) : configured;
            if (!layout.isEmpty() && !layout.equals(mine)) {
                return Optional.of("the gateway hashes it with KV layout '" + mine + "' but its workers with '" + layout
                        + "'; set flotilla.gateway.models." + model + ".kv-layout=" + layout + " or the workers' dtype");
            }
            return tokenizations.reconcile(model, tokenizerId, source);
        });
    }

    /**
     * {@code models}: DOWN with each model that cannot be routed and why (a block-hash namespace that
     * differs from its workers'); not in the readiness group, the other models still serve.
     */
    @Bean
    HealthIndicator modelsHealthIndicator(ModelCatalog catalog) {
        return () -> {
            Map<String, String> problems = catalog.problems();
            return (problems.isEmpty() ? Health.up() : Health.down()).withDetails(Map.copyOf(problems)).build();
        };
    }

    /**
     * Tokenizer and chat template of every configured model (built in, or from its model directory),
     * loaded at start-up; HuggingFace tokenizers are native and freed on shutdown.
     */
    @Bean(destroyMethod = "close")
    ModelTokenizations modelTokenizations(GatewayProperties properties, Clock clock) {
        Map<String, ModelTokenizations.Spec> specs = new HashMap<>();
        properties.models().forEach((name, m) ->
                specs.put(name, new ModelTokenizations.Spec(m.tokenizer(), m.chatTemplate(), m.modelDir())));
        return new ModelTokenizations(specs, Map.of(Cl100kTokenizer.ID, new Cl100kTokenizer()),
                Map.of(ChatMlTemplate.ID, new ChatMlTemplate()), clock);
    }

    @Bean
    ModelProfiles modelProfiles(GatewayProperties properties, ModelTokenizations tokenizations) {
        return new ModelProfiles(properties, tokenizations);
    }

    @Bean
    JobFactory jobFactory(ModelCatalog catalog, ModelProfiles profiles, GatewayProperties properties) {
        return new JobFactory(catalog, profiles, properties.defaultModel(), properties.defaultMaxTokens());
    }

    @Bean
    AdmissionControl admissionControl(ModelProfiles profiles) {
        return new AdmissionControl(profiles::admission, Schedulers.parallel());
    }

    @Bean
    GatewayMetrics gatewayMetrics(MeterRegistry registry) {
        return new GatewayMetrics(registry);
    }

    @Bean
    GenerationPipeline generationPipeline(RouterClient router, WorkerClient workers, GatewayMetrics metrics, Clock clock,
                                          GatewayProperties properties) {
        return new GenerationPipeline(router, workers, metrics, clock, properties.migrationLimit(),
                properties.streamIdleTimeout());
    }

    /**
     * Where request records go: Kafka's {@code flotilla.requests}, or nowhere when records are
     * disabled. Tests replace this bean. The publisher closes it.
     */
    @Bean(destroyMethod = "")
    RequestRecordSink requestRecordSink(GatewayProperties properties, KafkaClients kafka) {
        return properties.records().enabled() ? new KafkaRecordSink(kafka.producer()) : (record, onError) -> { };
    }

    /** The gateway writes request records and serves without Kafka: its {@code kafka} health is outside readiness. */
    @Bean
    @ConditionalOnProperty(name = "flotilla.gateway.records.enabled", havingValue = "true", matchIfMissing = true)
    KafkaTopicUse gatewayKafkaTopics() {
        return KafkaTopicUse.producerOnly(List.of(Topics.REQUESTS));
    }

    @Bean(destroyMethod = "close")
    RequestRecordPublisher requestRecordPublisher(RequestRecordSink sink, GatewayProperties properties,
                                                  GatewayMetrics metrics) {
        RequestRecordPublisher publisher = new RequestRecordPublisher(sink, properties.records().buffer());
        metrics.functionCounter("flotilla.gateway.records.dropped", "Request records dropped (buffer full)",
                publisher, RequestRecordPublisher::dropped);
        metrics.functionCounter("flotilla.gateway.records.failed", "Request records the sink failed to deliver",
                publisher, RequestRecordPublisher::failed);
        return publisher;
    }

    @Bean
    RequestAccounting requestAccounting(RouterClient router, GatewayMetrics metrics,
                                        RequestRecordPublisher records, Clock clock) {
        return new RequestAccounting(router, metrics, records, clock);
    }
}
