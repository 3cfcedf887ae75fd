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
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Schedulers;

import java.time.Clock;
import java.util.HashMap;
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

    @Bean
    ModelCatalog modelCatalog(RouterClient router, Clock clock, GatewayProperties properties) {
        return new ModelCatalog(router, clock, properties.modelsCacheTtl());
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
    RequestRecordSink requestRecordSink(GatewayProperties properties,
                                        @Value("${spring.kafka.bootstrap-servers}") String bootstrapServers) {
        return properties.records().enabled() ? new KafkaRecordSink(bootstrapServers) : (record, onError) -> { };
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
