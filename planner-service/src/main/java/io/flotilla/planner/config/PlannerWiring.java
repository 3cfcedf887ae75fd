package io.flotilla.planner.config;

import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.flotilla.planner.connector.GrpcDrainClient;
import io.flotilla.planner.connector.KubernetesConnector;
import io.flotilla.planner.connector.LocalConnector;
import io.flotilla.planner.connector.ProcessRunner;
import io.flotilla.planner.connector.ScalingConnector;
import io.flotilla.planner.connector.ShadowConnector;
import io.flotilla.planner.leader.Leadership;
import io.flotilla.planner.model.PerformanceModel;
import io.flotilla.planner.model.PerformanceProfile;
import io.flotilla.planner.model.ProfileJson;
import io.flotilla.planner.model.SimulatedEngineProfile;
import io.flotilla.planner.plan.Planner;
import io.flotilla.planner.service.DecisionHistory;
import io.flotilla.planner.service.KafkaDecisionSink;
import io.flotilla.planner.service.ObservationFeed;
import io.flotilla.planner.service.PlannerLoop;
import io.flotilla.planner.service.PlannerMetrics;
import io.flotilla.kafka.boot.KafkaClients;
import io.flotilla.kafka.boot.KafkaFeeds;
import io.flotilla.kafka.boot.KafkaTopicUse;
import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.ProtoProducers;
import io.flotilla.protocol.kafka.TopicTailer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.RequestRecord;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** Wires the planner: feeds from Kafka, the planner and its connector, the decision loop, publisher and metrics. */
@Configuration(proxyBeanMethods = false)
class PlannerWiring {

    private static final Logger log = LoggerFactory.getLogger(PlannerWiring.class);

    /**
     * Runs before any bean is made, so before {@link PlannerProperties} is bound: its binding refuses an old key
     * too, but without the name that replaced it.
     */
    @Bean
    static BeanFactoryPostProcessor renamedKeys(Environment environment) {
        return beanFactory -> RenamedKeys.check(environment);
    }

    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }

    @Bean
    PerformanceModel performanceModel(PlannerProperties p) {
        PerformanceProfile profile;
        if (p.profile() == null || p.profile().isBlank()) {
            profile = SimulatedEngineProfile.create(p.simSpeedup());
        } else {
            try {
                profile = ProfileJson.read(Path.of(p.profile()));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the planner profile " + p.profile(), e);
            }
        }
        log.info("performance profile: {}", profile.name());
        return new PerformanceModel(profile);
    }

    @Bean
    Planner planner(PlannerProperties p, PerformanceModel model) {
        return new Planner(p.toConfig(), model);
    }

    @Bean(destroyMethod = "close")
    ScalingConnector scalingConnector(PlannerProperties p, Clock clock, Leadership leadership, MeterRegistry registry) {
        return switch (p.connector()) {
            case "local" -> new LocalConnector(p.local().root(), ProcessRunner.system(), new GrpcDrainClient(),
                    p.deadlines().drain(), clock, p.local().maxWorkers());
            case "kubernetes" -> new KubernetesConnector(new KubernetesClientBuilder().build(), p.namespace(),
                    new GrpcDrainClient(), p.deadlines().drain(), Executors.newSingleThreadExecutor(r -> {
                        Thread t = new Thread(r, "planner-scale-down");
                        t.setDaemon(true);
                        return t;
                    }), leadership::leads, clock, p.deadlines().groupReady(), registry);
            default -> new ShadowConnector();
        };
    }

    @Bean
    ObservationFeed observationFeed(PlannerProperties p, Clock clock, MeterRegistry registry) {
        ObservationFeed feed = new ObservationFeed(p.model(), clock);
        Gauge.builder("flotilla.planner.gateway_queued", feed, ObservationFeed::gatewayQueued)
                .description("Requests of the model waiting in the gateways' flow-control queues, as last reported "
                        + "(counted as demand in flight)").register(registry);
        return feed;
    }

    @Bean
    DecisionHistory decisionHistory(PlannerProperties p) {
        return new DecisionHistory(p.history());
    }

    @Bean
    PlannerMetrics plannerMetrics(MeterRegistry registry, Leadership leadership) {
        return new PlannerMetrics(registry, leadership);
    }

    @Bean(destroyMethod = "close")
    Producer<String, Object> plannerProducer(KafkaClients kafka) {
        return ProtoProducers.create(kafka.producer(), "flotilla-planner", 500, Map.of());
    }

    @Bean
    KafkaFeeds plannerKafkaFeeds() {
        return new KafkaFeeds();
    }

    /**
     * The planner writes its decisions; it reads membership, load, request records and the gateways' queues, and is ready once it
     * has read membership (it plans nothing sensible before).
     */
    @Bean
    KafkaTopicUse plannerKafkaTopics(KafkaFeeds feeds) {
        return new KafkaTopicUse(List.of(Topics.PLANNER_DECISIONS), List.of(Topics.WORKERS, Topics.WORKER_LOAD, Topics.REQUESTS,
                Topics.GATEWAY_LOAD),
                () -> feeds.loaded(Topics.WORKERS.name()), feeds::problems);
    }

    /** Holds the membership tailer once started, so the loop can ask whether the feed is healthy. */
    @Bean
    AtomicReference<TopicTailer<WorkerStatus>> membershipTailer() {
        return new AtomicReference<>();
    }

    @Bean
    PlannerLoop plannerLoop(Planner planner, ObservationFeed feed, AtomicReference<TopicTailer<WorkerStatus>> membershipTailer,
                            ScalingConnector connector, Producer<String, Object> plannerProducer, DecisionHistory history,
                            PlannerMetrics metrics, Clock clock, Leadership leadership) {
        return new PlannerLoop(planner, feed, () -> {
            TopicTailer<WorkerStatus> t = membershipTailer.get();
            return t == null ? -1 : t.unhealthySinceMs();
        }, connector, new KafkaDecisionSink(plannerProducer), history, metrics, clock, leadership);
    }

    /** The Kafka feeds and the planning timer. */
    @Bean
    SmartLifecycle plannerFeeds(PlannerLoop loop, ObservationFeed feed, PlannerProperties p,
                                AtomicReference<TopicTailer<WorkerStatus>> membershipTailer,
                                KafkaClients kafka, KafkaFeeds feeds, Clock clock) {
        Map<String, Object> consumer = kafka.consumer();
        return new SmartLifecycle() {
            private List<TopicTailer<?>> tailers = List.of();
            private ScheduledExecutorService timer;
            private volatile boolean running;

            @Override
            public void start() {
                String clientId = "planner-" + Long.toHexString(new SecureRandom().nextLong());
                TopicTailer<WorkerStatus> membership = new TopicTailer<>(clientId, TopicTailer.stateFeed(consumer), Topics.WORKERS.name(),
                        new ProtoDeserializer.WorkerStatuses(), TopicTailer.Start.EARLIEST, Map.of(),
                        TopicTailer.eachValue(feed::onStatus), clock);
                TopicTailer<WorkerLoad> load = new TopicTailer<>(clientId, TopicTailer.stateFeed(consumer), Topics.WORKER_LOAD.name(),
                        new ProtoDeserializer.WorkerLoads(), TopicTailer.Start.LATEST, Map.of(),
                        TopicTailer.eachValue(feed::onLoad), clock);
                TopicTailer<RequestRecord> requests = new TopicTailer<>(clientId, consumer, Topics.REQUESTS.name(),
                        new ProtoDeserializer.RequestRecords(), TopicTailer.Start.LATEST, Map.of(),
                        TopicTailer.eachValue(feed::onRequest), clock);
                TopicTailer<GatewayLoad> gateways = new TopicTailer<>(clientId, consumer, Topics.GATEWAY_LOAD.name(),
                        new ProtoDeserializer.GatewayLoads(), TopicTailer.Start.LATEST, Map.of(),
                        TopicTailer.eachValue(feed::onGatewayLoad), clock);
                membershipTailer.set(membership);
                tailers = List.of(feeds.add(membership).start(), feeds.add(load).start(), feeds.add(requests).start(),
                        feeds.add(gateways).start());
                timer = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "planner-timer");
                    t.setDaemon(true);
                    return t;
                });
                long ms = p.interval().toMillis();
                timer.scheduleAtFixedRate(() -> {
                    try {
                        loop.tick();
                    } catch (RuntimeException e) {
                        log.error("planning interval failed", e);
                    }
                }, ms, ms, TimeUnit.MILLISECONDS);
                running = true;
            }

            @Override
            public void stop() {
                if (timer != null) {
                    timer.shutdownNow();
                }
                tailers.forEach(t -> {
                    t.close();
                    feeds.remove(t);
                });
                running = false;
            }

            @Override
            public boolean isRunning() {
                return running;
            }
        };
    }
}
