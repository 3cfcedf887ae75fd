package io.flotilla.indexer.config;

import io.flotilla.indexer.api.IndexerGrpcService;
import io.flotilla.indexer.api.KvIndexEndpoint;
import io.flotilla.indexer.core.ApplierStats;
import io.flotilla.indexer.service.IndexService;
import io.flotilla.indexer.service.IndexerProperties;
import io.flotilla.indexer.service.KafkaIndexFeeds;
import io.flotilla.kafka.boot.KafkaClients;
import io.flotilla.kafka.boot.KafkaFeeds;
import io.flotilla.kafka.boot.KafkaTopicUse;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.time.MonotonicClock;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/** Wires the index service, its periodic work, its gRPC service, endpoint and metrics. */
@Configuration(proxyBeanMethods = false)
class IndexerConfig {

    /** Monotonic: leases are counted on it from the receipt of each heartbeat, and must not jump with NTP. */
    @Bean
    Clock clock() {
        return MonotonicClock.start();
    }

    @Bean
    KafkaFeeds indexerKafkaFeeds() {
        return new KafkaFeeds();
    }

    @Bean
    IndexService indexService(IndexerProperties properties, KafkaClients kafka, KafkaFeeds feeds, Clock clock) {
        String shardGroup = properties.sharding().enabled() ? properties.sharding().groupId() : null;
        return new IndexService(properties, new KafkaIndexFeeds(kafka.consumer(), feeds, clock, shardGroup), clock);
    }

    /**
     * The indexer writes nothing to Kafka; it reads membership, KV events and load, and is ready once it has
     * read membership to its end or restored a snapshot (before, it would answer every FindMatches empty).
     */
    @Bean
    KafkaTopicUse indexerKafkaTopics(KafkaFeeds feeds, ObjectProvider<IndexService> index) {
        return new KafkaTopicUse(List.of(), List.of(Topics.WORKERS, Topics.KV_EVENTS, Topics.WORKER_LOAD),
                () -> index.getObject().stateLoaded(), feeds::problems);
    }

    /** Starts the feeds after the context is up; on shutdown writes a last snapshot. */
    @Bean
    SmartLifecycle indexLifecycle(IndexService index, IndexerProperties properties) {
        return new SmartLifecycle() {
            private ScheduledExecutorService timer;
            private volatile boolean running;

            @Override
            public void start() {
                index.start();
                timer = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "indexer-timer");
                    t.setDaemon(true);
                    return t;
                });
                long tick = properties.tickInterval().toMillis();
                timer.scheduleWithFixedDelay(guard(index::tick), tick, tick, TimeUnit.MILLISECONDS);
                long snap = properties.snapshotInterval().toMillis();
                timer.scheduleWithFixedDelay(guard(() -> {
                    try {
                        index.snapshotNow();
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }), snap, snap, TimeUnit.MILLISECONDS);
                running = true;
            }

            @Override
            public void stop() {
                if (timer != null) {
                    timer.shutdownNow();
                }
                index.close();
                running = false;
            }

            @Override
            public boolean isRunning() {
                return running;
            }
        };
    }

    @Bean
    IndexerGrpcService indexerGrpcService(IndexService index, Clock clock, MeterRegistry registry) {
        return new IndexerGrpcService(index, clock, registry);
    }

    @Bean
    KvIndexEndpoint kvIndexEndpoint(IndexService index) {
        return new KvIndexEndpoint(index);
    }

    @Bean
    MeterBinder indexerMeters(IndexService index) {
        return registry -> bindMeters(index, registry);
    }

    private static void bindMeters(IndexService index, MeterRegistry registry) {
        Timer lag = Timer.builder("flotilla.indexer.apply.lag")
                .description("A KV event batch from its worker sealing it to applied to the index (Kafka, fetch, writer queue)")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(30)).register(registry);
        index.onApplyLag(ms -> lag.record(ms, TimeUnit.MILLISECONDS));
        counter(registry, index, "flotilla.indexer.events", "KV events applied", ApplierStats::eventsApplied);
        counter(registry, index, "flotilla.indexer.block_events", "Block-level changes applied", ApplierStats::blockEventsApplied);
        counter(registry, index, "flotilla.indexer.gaps", "Sequence gaps detected", ApplierStats::gaps);
        counter(registry, index, "flotilla.indexer.duplicates", "Duplicate batches dropped", ApplierStats::duplicates);
        counter(registry, index, "flotilla.indexer.reconciliations", "Worker sets replaced from a snapshot",
                ApplierStats::reconciliationsApplied);
        counter(registry, index, "flotilla.indexer.lease_expiries", "Workers dropped at lease expiry", ApplierStats::leaseExpiries);
        Gauge.builder("flotilla.indexer.blocks", index, i -> i.applier().index().residentPairs())
                .description("Resident (block, worker) pairs in the index").register(registry);
        Gauge.builder("flotilla.indexer.workers", index, i -> i.applier().workers().size())
                .description("Workers the index follows").register(registry);
        Gauge.builder("flotilla.indexer.consumer_lag", index, IndexService::consumerLag)
                .description("kv-events records not yet applied").register(registry);
        Gauge.builder("flotilla.indexer.shard_partitions", index, i -> i.coverage() == null ? -1 : i.coverage().partitions().size())
                .description("kv-events partitions this shard is assigned; -1 when the indexer is not a shard (it reads all)")
                .register(registry);
        FunctionCounter.builder("flotilla.indexer.shard_rebalances", index, IndexService::rebalances)
                .description("Assignments this shard rebuilt its index for").register(registry);
        FunctionCounter.builder("flotilla.indexer.shard_partitions_restored", index, IndexService::partitionsRestored)
                .description("Newly assigned partitions restored from a snapshot (the others are replayed from the start)")
                .register(registry);
        Gauge.builder("flotilla.indexer.snapshot_age_seconds", index, i -> i.snapshotAgeMs() / 1000.0)
                .description("Age of the last index snapshot").register(registry);
    }

    private static void counter(MeterRegistry registry, IndexService index, String name, String description,
                                ToLongFunction<ApplierStats> f) {
        FunctionCounter.builder(name, index, i -> f.applyAsLong(i.applier().stats()))
                .description(description).register(registry);
    }

    private static Runnable guard(Runnable r) {
        return () -> {
            try {
                r.run();
            } catch (RuntimeException e) {
                org.slf4j.LoggerFactory.getLogger(IndexerConfig.class).error("periodic indexer task failed", e);
            }
        };
    }
}
