package io.flotilla.router.config;

import io.flotilla.kafka.boot.KafkaClients;
import io.flotilla.kafka.boot.KafkaFeeds;
import io.flotilla.kafka.boot.KafkaTopicUse;
import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.ProtoProducers;
import io.flotilla.protocol.kafka.TopicTailer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.time.MonotonicClock;
import io.flotilla.protocol.v1.RouterSync;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.api.RouterEndpoint;
import io.flotilla.router.api.RouterGrpcService;
import io.flotilla.router.client.DeadlineEstimator;
import io.flotilla.router.client.IndexerClient;
import io.flotilla.router.client.IndexerShards;
import io.flotilla.router.client.KvMatches;
import io.flotilla.router.client.ShardedIndexer;
import io.flotilla.router.cluster.SuspectProber;
import io.flotilla.router.cluster.WorkerChannels;
import io.flotilla.router.cluster.WorkerWatch;
import io.flotilla.router.cluster.WorkerDirectory;
import io.flotilla.router.booking.BookingLedger;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.service.CapacityPublisher;
import io.flotilla.router.service.RequestRouter;
import io.flotilla.router.service.RouterMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcClientInterceptor;
import io.micrometer.observation.ObservationRegistry;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import io.flotilla.protocol.grpc.SharedEventLoop;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** Wires the router: membership and load feeds, replica sync, indexer client, policy, gRPC and actuator. */
@Configuration(proxyBeanMethods = false)
class RouterWiring {

    /** Monotonic: leases count from the receipt of each heartbeat on it, and must not jump with NTP. */
    @Bean
    Clock clock(Environment environment) {
        RenamedKeys.check(environment); // the first bean most others need: fail before anything starts
        return MonotonicClock.start();
    }

    @Bean
    RouterConfig routingConfig(RouterProperties p) {
        return p.routingConfig();
    }

    /** The router's gRPC I/O thread, shared by its server and its indexer channel (see {@link SharedEventLoop}). */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(prefix = "flotilla.router", name = "shared-event-loop", havingValue = "true", matchIfMissing = true)
    SharedEventLoop routerEventLoop() {
        return new SharedEventLoop("router-io");
    }

    /** One client per indexer address: the indexer, or each shard (own deadline, own breaker {@code indexer-<n>}). */
    @Bean(destroyMethod = "close")
    IndexerShards indexerShards(RouterProperties p, MeterRegistry registry, ObjectProvider<SharedEventLoop> routerEventLoop,
                                ObservationRegistry observations) {
        List<String> addresses = p.indexer().all();
        List<IndexerClient> clients = new java.util.ArrayList<>();
        for (int i = 0; i < addresses.size(); i++) {
            clients.add(new IndexerClient(addresses.size() == 1 ? "indexer" : "indexer-" + i, addresses.get(i),
                    new DeadlineEstimator(p.indexer().deadline().settings(), p.indexer().deadline().stake()), registry, routerEventLoop.getIfAvailable(),
                    java.util.List.of(new ObservationGrpcClientInterceptor(observations))));
        }
        return new IndexerShards(clients);
    }

    /** The first indexer client (the only one without shards): its deadline, tail and misses as gauges. */
    @Bean
    IndexerClient indexerClient(IndexerShards shards, MeterRegistry registry) {
        IndexerClient client = shards.first();
        Gauge.builder("flotilla.router.indexer.deadline", client, c -> c.deadline().deadlineNanos() / 1e9)
                .baseUnit("seconds").description("The FindMatches deadline now").register(registry);
        Gauge.builder("flotilla.router.indexer.tail", client, c -> Math.max(0, c.deadline().tailNanos()) / 1e9)
                .baseUnit("seconds").description("FindMatches latency at the deadline's quantile over its window")
                .register(registry);
        FunctionCounter.builder("flotilla.router.indexer.missed_deadlines", client, IndexerClient::missedDeadlines)
                .description("FindMatches calls that missed their deadline").register(registry);
        return client;
    }

    @Bean(destroyMethod = "close")
    Producer<String, Object> routerProducer(KafkaClients kafka) {
        return ProtoProducers.create(kafka.producer(), "flotilla-router", 500, Map.of(ProducerConfig.LINGER_MS_CONFIG, 2));
    }

    @Bean
    KafkaFeeds routerKafkaFeeds() {
        return new KafkaFeeds();
    }

    /**
     * The router writes booking changes for its replicas and reads membership and load; it is ready once
     * it has read membership (before, it knows no worker). A later Kafka outage keeps it serving: leases
     * freeze while the membership feed is unhealthy.
     */
    @Bean
    KafkaTopicUse routerKafkaTopics(KafkaFeeds feeds) {
        return new KafkaTopicUse(List.of(Topics.ROUTER_SYNC), List.of(Topics.WORKERS, Topics.WORKER_LOAD),
                () -> feeds.loaded(Topics.WORKERS.name()), feeds::problems);
    }

    @Bean
    RouterMetrics routerMetrics(MeterRegistry registry) {
        return new RouterMetrics(registry);
    }

    @Bean
    RequestRouter requestRouter(RouterConfig config, RouterProperties p, IndexerClient indexer, IndexerShards shards,
                              Producer<String, Object> routerProducer, RouterMetrics metrics, Clock clock,
                              MeterRegistry registry) {
        String routerId = p.name() + "-" + Long.toHexString(new SecureRandom().nextLong());
        long seed = p.seed() != 0 ? p.seed() : System.nanoTime();
        BookingLedger ledger = BookingLedger.create(routerId, config);
        KvMatches matches = shards.sharded()
                ? new ShardedIndexer(shards.clients(), seq -> ledger.approximateOverlaps(seq, clock.instant()), registry)
                : indexer;
        RequestRouter engine = new RequestRouter(config, new WorkerDirectory(), ledger, indexer, matches, routerProducer,
                metrics, clock, new SplittableRandom(seed), routerId);
        Gauge.builder("flotilla.router.workers", engine, e -> e.directory().size())
                .description("Workers in membership").register(registry);
        Gauge.builder("flotilla.router.workers.routable", engine, e -> e.directory().routable())
                .description("Workers routing may pick now: in membership, routable and not suspect").register(registry);
        Gauge.builder("flotilla.router.active_sequences", engine, e -> e.ledger().sequences().size())
                .description("Requests booked and not yet released").register(registry);
        FunctionCounter.builder("flotilla.router.sync_errors", engine, RequestRouter::syncErrors)
                .description("Booking changes that could not be shared with other replicas").register(registry);
        return engine;
    }

    /**
     * The thread that builds and sends WatchCapacity updates (one, so updates go out in order): the
     * router's I/O thread when it has one, so that a Release read there is followed by its update
     * written there, with no thread woken in between; else a thread of its own.
     */
    @Bean(destroyMethod = "")
    Scheduler capacityScheduler(ObjectProvider<SharedEventLoop> routerEventLoop) {
        SharedEventLoop loop = routerEventLoop.getIfAvailable();
        // The event loop's scheduler is not disposed here: disposing would shut the loop down; closing it does.
        return loop != null ? Schedulers.fromExecutorService(loop.executor(), "router-io")
                : Schedulers.newSingle("router-capacity", true);
    }

    @Bean
    CapacityPublisher capacityPublisher(RequestRouter engine, RouterProperties p, Scheduler capacityScheduler,
                                        MeterRegistry registry) {
        CapacityPublisher publisher = new CapacityPublisher(engine::capacityMessages, engine.routerId(), capacityScheduler,
                System::nanoTime, new CapacityPublisher.Settings(p.capacity().coalesce(), p.capacity().heartbeat(),
                p.capacity().maxShare()), registry);
        engine.onCapacityChange(publisher::changed);
        return publisher;
    }

    @Bean
    RouterGrpcService routerGrpcService(RequestRouter engine, CapacityPublisher capacityPublisher) {
        return new RouterGrpcService(engine, capacityPublisher);
    }

    @Bean
    RouterEndpoint routerEndpoint(RequestRouter engine, RouterMetrics metrics, CapacityPublisher capacityPublisher) {
        return new RouterEndpoint(engine, metrics, capacityPublisher);
    }

    /**
     * The Kafka feeds, the periodic tick and the capacity heartbeat, started once the gRPC server is up;
     * stopping ends the WatchCapacity streams before the gRPC server shuts down (which would wait for them).
     */
    @Bean
    SmartLifecycle routerFeeds(RequestRouter engine, IndexerShards indexer, CapacityPublisher capacity,
                               KafkaClients kafka, KafkaFeeds feeds, Clock clock, RouterProperties p,
                               MeterRegistry registry) {
        Map<String, Object> consumer = kafka.consumer();
        return new SmartLifecycle() {
            private List<TopicTailer<?>> tailers = List.of();
            private ScheduledExecutorService timer;
            private WorkerChannels channels;
            private WorkerWatch watch;
            private volatile boolean running;

            @Override
            public void start() {
                TopicTailer<WorkerStatus> membership = new TopicTailer<>(engine.routerId(), TopicTailer.stateFeed(consumer), Topics.WORKERS.name(),
                        new ProtoDeserializer.WorkerStatuses(), TopicTailer.Start.EARLIEST, Map.of(),
                        TopicTailer.eachValue(engine::onStatus), clock);
                TopicTailer<WorkerLoad> load = new TopicTailer<>(engine.routerId(), TopicTailer.stateFeed(consumer), Topics.WORKER_LOAD.name(),
                        new ProtoDeserializer.WorkerLoads(), TopicTailer.Start.LATEST, Map.of(),
                        TopicTailer.eachValue(engine::onLoad), clock);
                TopicTailer<RouterSync> sync = new TopicTailer<>(engine.routerId(), consumer, Topics.ROUTER_SYNC.name(),
                        new ProtoDeserializer.RouterSyncs(), TopicTailer.Start.LATEST, Map.of(),
                        TopicTailer.eachValue(engine::onSync), clock);
                tailers = List.of(feeds.add(membership).start(), feeds.add(load).start(), feeds.add(sync).start());
                channels = new WorkerChannels();
                SuspectProber prober = new SuspectProber(engine.directory(), channels, capacity::changed);
                capacity.start();
                timer = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "router-timer");
                    t.setDaemon(true);
                    return t;
                });
                timer.scheduleWithFixedDelay(() -> {
                    try {
                        engine.tick(membership.healthy());
                    } catch (RuntimeException e) {
                        org.slf4j.LoggerFactory.getLogger(RouterWiring.class).error("router tick failed", e);
                    }
                }, 250, 250, TimeUnit.MILLISECONDS);
                timer.scheduleWithFixedDelay(prober::probe, 1, 1, TimeUnit.SECONDS);
                if (p.watch().enabled()) {
                    watch = new WorkerWatch(engine.directory(), channels, capacity::changed, clock::millis,
                            p.watch().retryMax().toMillis());
                    bindWatchMetrics(watch, registry);
                    timer.scheduleWithFixedDelay(watch::sync, 0, 1, TimeUnit.SECONDS);
                }
                timer.scheduleWithFixedDelay(indexer::keepWarm, 0, 1, TimeUnit.SECONDS);
                timer.scheduleAtFixedRate(indexer::roll, 1, 1, TimeUnit.SECONDS);
                running = true;
            }

            @Override
            public void stop() {
                capacity.close();
                if (timer != null) {
                    timer.shutdownNow();
                }
                tailers.forEach(t -> {
                    t.close();
                    feeds.remove(t);
                });
                if (watch != null) {
                    watch.close();
                }
                if (channels != null) {
                    channels.close();
                }
                running = false;
            }

            @Override
            public boolean isRunning() {
                return running;
            }
        };
    }

    private static void bindWatchMetrics(WorkerWatch watch, MeterRegistry registry) {
        Gauge.builder("flotilla.router.watch.open", watch, WorkerWatch::established)
                .description("Health watches established on routable workers (their death is noticed at once)")
                .register(registry);
        FunctionCounter.builder("flotilla.router.watch.lost", watch, WorkerWatch::lost)
                .description("Workers made suspect because their watched connection broke or said NOT_SERVING")
                .register(registry);
        FunctionCounter.builder("flotilla.router.watch.unreachable", watch, WorkerWatch::unreachable)
                .description("Watches that could not be set up (the worker stays routable on its lease; retried)")
                .register(registry);
    }
}
