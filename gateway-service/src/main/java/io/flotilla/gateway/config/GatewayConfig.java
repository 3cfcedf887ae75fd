package io.flotilla.gateway.config;

import io.flotilla.gateway.client.KafkaRecordSink;
import io.flotilla.gateway.client.ModelCatalog;
import io.flotilla.gateway.client.RequestRecordPublisher;
import io.flotilla.gateway.client.RequestRecordSink;
import io.flotilla.gateway.client.RouteDeadline;
import io.flotilla.gateway.client.RouterClient;
import io.flotilla.gateway.client.WorkerClient;
import io.flotilla.gateway.flow.FlowController;
import io.flotilla.gateway.flow.FlowLoadReporter;
import io.flotilla.gateway.flow.FlowMetrics;
import io.flotilla.gateway.flow.FlowPolicy;
import io.flotilla.gateway.flow.PrefixMemory;
import io.flotilla.gateway.flow.Priority;
import io.flotilla.gateway.flow.TenantGate;
import io.flotilla.gateway.metrics.TenantMetrics;
import io.flotilla.gateway.metrics.TenantTags;
import io.flotilla.gateway.generation.EmbeddingPipeline;
import io.flotilla.gateway.generation.GenerationPipeline;
import io.flotilla.gateway.generation.JobFactory;
import io.flotilla.gateway.generation.KvScopes;
import io.flotilla.gateway.generation.ModelProfiles;
import io.flotilla.gateway.generation.RequestAccounting;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.routing.CapacityWatch;
import io.flotilla.gateway.routing.FleetView;
import io.flotilla.gateway.tokenize.ChatMlTemplate;
import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import io.flotilla.gateway.tokenize.ModelTokenizations;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcClientInterceptor;
import io.micrometer.observation.ObservationRegistry;
import io.flotilla.kafka.boot.KafkaClients;
import io.flotilla.protocol.hash.KvNamespace;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import io.flotilla.kafka.boot.KafkaTopicUse;
import io.flotilla.protocol.kafka.Topics;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Wires the request path: router and worker clients, flow control, capacity watch, model catalog and profiles, records. */
@Configuration(proxyBeanMethods = false)
class GatewayConfig {

    @Bean
    Clock clock(org.springframework.core.env.Environment environment) {
        RenamedKeys.check(environment); // first bean of the request path: fail before anything starts
        return Clock.systemUTC();
    }

    /**
     * The router channels' own event loop (one thread). Route answers used to share gRPC's default
     * loops with the worker channels, whose threads serialise every GenerateRequest (a 40k-token prompt
     * is 160 KB of protobuf) and relay every token: in a burst of long prompts a Route answer waited
     * behind them. On its own loop, Route I/O waits for nothing but the router.
     */
    @Bean(destroyMethod = "shutdownGracefully")
    EventLoopGroup routerEventLoop() {
        return new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("gateway-router-io", true),
                NioIoHandler.newFactory());
    }

    /**
     * One channel per configured router target (a comma-separated list); connecting starts at once.
     * Answers are handled on the router loop itself ({@code directExecutor}): what runs there (routing
     * the next call, writing to the client) never blocks. {@code round_robin} spreads a
     * {@code dns:///} target over every address it resolves to. Every call is observed (trace context sent on,
     * {@code grpc.client} timers).
     */
    @Bean
    List<ManagedChannel> routerChannels(GatewayProperties properties, EventLoopGroup routerEventLoop,
                                        ObservationRegistry observations) {
        List<ManagedChannel> channels = new ArrayList<>();
        for (String target : properties.routerAddress().split(",")) {
            if (target.isBlank()) {
                continue;
            }
            channels.add(NettyChannelBuilder.forTarget(target.strip())
                    .usePlaintext()
                    .directExecutor()
                    .eventLoopGroup(routerEventLoop)
                    .channelType(NioSocketChannel.class)
                    .defaultLoadBalancingPolicy("round_robin")
                    .keepAliveTime(30, TimeUnit.SECONDS)
                    .intercept(new ObservationGrpcClientInterceptor(observations))
                    .build());
        }
        if (channels.isEmpty()) {
            throw new IllegalStateException("flotilla.gateway.router-address names no router");
        }
        return channels;
    }

    @Bean
    RouteDeadline routeDeadline(GatewayProperties properties) {
        GatewayProperties.RouteDeadline d = properties.routeDeadline();
        return new RouteDeadline(d.floor(), d.ceiling(), d.percentile(), d.multiplier(), d.window(), d.minSamples(),
                System::nanoTime);
    }

    @Bean(destroyMethod = "")
    RouterClient routerClient(List<ManagedChannel> routerChannels, RouteDeadline deadline, GatewayProperties properties,
                              GatewayMetrics metrics) {
        RouterClient client = new RouterClient(routerChannels, deadline, properties.routerCallTimeout(),
                (router, outcome, nanos) -> metrics.routeAttempt(router, outcome.name().toLowerCase(java.util.Locale.ROOT), nanos));
        metrics.gauge("flotilla.gateway.route.deadline", "Current deadline of one Route attempt (seconds)", deadline,
                d -> d.current().toNanos() / 1e9);
        return client;
    }

    /** Closes the router channels after everything that uses them. */
    @Bean(destroyMethod = "close")
    AutoCloseable routerChannelsCloser(List<ManagedChannel> routerChannels) {
        return () -> routerChannels.forEach(ManagedChannel::shutdownNow);
    }

    @Bean(destroyMethod = "close")
    WorkerClient workerClient(GatewayProperties properties, ObservationRegistry observations) {
        return new WorkerClient(properties.prefillTimeout(), List.of(new ObservationGrpcClientInterceptor(observations)));
    }

    /**
     * The served models, each checked against its workers' block-hash namespace: the tokenizer (configured,
     * or adopted from the workers' registration, see {@link ModelTokenizations#reconcile}) and the KV layout.
     */
    @Bean
    FleetView fleetView(RouterClient router) {
        FleetView fleet = new FleetView();
        router.onWorkerList(fleet::listed);
        return fleet;
    }

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
    ModelProfiles modelProfiles(GatewayProperties properties, ModelTokenizations tokenizations, GatewayMetrics metrics) {
        ModelProfiles profiles = new ModelProfiles(properties.generation(), tokenizations);
        metrics.promptCache(profiles.promptCache());
        return profiles;
    }

    /** Parsing, tokenizing and hashing of long requests: bounded, so Route and stream I/O always get a core. */
    @Bean(destroyMethod = "dispose")
    Scheduler prepareScheduler(GatewayProperties properties) {
        return Schedulers.newParallel("gateway-prepare", properties.prepare().threadsOrDefault(), true);
    }

    @Bean
    JobFactory jobFactory(ModelCatalog catalog, ModelProfiles profiles, GatewayProperties properties, Scheduler prepareScheduler,
                          ObservationRegistry observations) {
        return new JobFactory(catalog, profiles, properties.defaultModel(), properties.defaultMaxTokens(), prepareScheduler,
                new KvScopes(properties.generation(), profiles::tokenization), observations);
    }

    @Bean
    FlowPolicy flowPolicy(GatewayProperties properties) {
        GatewayProperties.Flow f = properties.flow();
        Map<String, FlowPolicy.Tenant> tenants = new HashMap<>();
        f.tenants().forEach((id, t) -> tenants.put(id, new FlowPolicy.Tenant(priority("tenants." + id + ".priority", t.priority()),
                priority("tenants." + id + ".max-priority", t.maxPriority()), t.weight())));
        return new FlowPolicy(priority("default-priority", f.defaultPriority()), tenants, f.maxQueueTimeout());
    }

    private static Priority priority(String key, String value) {
        if (value == null) {
            return null;
        }
        Priority p = Priority.parse(value);
        if (p == null) {
            throw new IllegalStateException("flotilla.gateway.flow." + key + ": '" + value
                    + "' is not a band; use interactive, standard or batch");
        }
        return p;
    }

    /** Flow control; per-flow in-flight limits through {@code gate}, tenant tags shared with the per-tenant meters. */
    @Bean
    FlowController flowController(ModelProfiles profiles, GatewayProperties properties, FlowPolicy policy,
                                  MeterRegistry registry, TenantGate gate, TenantTags tenantTags,
                                  ObservationRegistry observations) {
        GatewayProperties.Flow f = properties.flow();
        return new FlowController(profiles::flowLimits, Schedulers.parallel(), new FlowMetrics(registry, tenantTags::tag),
                f.quantum(), policy::weight, f.pollInterval(), gate, observations);
    }

    @Bean
    PrefixMemory prefixMemory(GatewayProperties properties) {
        return new PrefixMemory(properties.flow().prefixMemoryBlocks());
    }

    @Bean
    GatewayInstance gatewayInstance() {
        return GatewayInstance.create();
    }

    @Bean(destroyMethod = "close")
    CapacityWatch capacityWatch(RouterClient router, FleetView fleet, FlowController flow, GatewayInstance instance) {
        return new CapacityWatch(router, fleet, flow, instance.id()).start();
    }

    @Bean
    GatewayMetrics gatewayMetrics(MeterRegistry registry) {
        return new GatewayMetrics(registry);
    }

    @Bean
    EmbeddingPipeline embeddingPipeline(RouterClient router, WorkerClient workers, FlowController flow, FleetView fleet,
                                        GatewayMetrics metrics, GatewayProperties properties) {
        return new EmbeddingPipeline(router, workers, flow, fleet, metrics, properties.flow().retryAfter());
    }

    @Bean
    GenerationPipeline generationPipeline(RouterClient router, WorkerClient workers, FlowController flow, FleetView fleet,
                                          GatewayMetrics metrics, Clock clock, GatewayProperties properties,
                                          Scheduler prepareScheduler) {
        return new GenerationPipeline(router, workers, flow, fleet, metrics, clock, properties.migrationLimit(),
                properties.streamIdleTimeout(), properties.flow().retryAfter(), prepareScheduler,
                properties.prepare().inlineTokens());
    }

    /**
     * Where request records go: Kafka's {@code flotilla.requests}, or nowhere when records are
     * disabled. Tests replace this bean. The publisher closes it.
     */
    @Bean(destroyMethod = "")
    RequestRecordSink requestRecordSink(GatewayProperties properties, KafkaClients kafka, MeterRegistry registry) {
        return properties.records().enabled() ? new KafkaRecordSink(kafka.producer()).bindMetrics(registry)
                : (record, onError) -> { };
    }

    /** The gateway writes request records and serves without Kafka: its {@code kafka} health is outside readiness. */
    @Bean
    @ConditionalOnProperty(name = "flotilla.gateway.records.enabled", havingValue = "true", matchIfMissing = true)
    KafkaTopicUse gatewayKafkaTopics() {
        return KafkaTopicUse.producerOnly(List.of(Topics.REQUESTS, Topics.GATEWAY_LOAD));
    }

    /**
     * This gateway's flow-control queue and in-flight requests per model on {@code flotilla.gateway-load}
     * every {@code records.load-interval}, for the planner; off when records are disabled or the
     * interval is 0.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(name = "flotilla.gateway.records.enabled", havingValue = "true", matchIfMissing = true)
    FlowLoadReporter flowLoadReporter(GatewayInstance instance, FlowController flow, RequestRecordSink sink,
                                      GatewayProperties properties, GatewayMetrics metrics, Clock clock) {
        FlowLoadReporter reporter = new FlowLoadReporter(instance.id(), flow, sink::load,
                properties.records().loadInterval(), clock);
        metrics.functionCounter("flotilla.gateway.load.reports", "Gateway load reports handed to Kafka",
                reporter, FlowLoadReporter::sent);
        metrics.functionCounter("flotilla.gateway.load.reports.failed", "Gateway load reports not delivered",
                reporter, FlowLoadReporter::failed);
        return reporter.start();
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
    RequestAccounting requestAccounting(GatewayMetrics metrics, TenantMetrics tenants, RequestRecordPublisher records,
                                        Clock clock) {
        return new RequestAccounting(metrics, tenants, records, clock);
    }
}
