package io.flotilla.indexer.service;

import io.flotilla.kafka.boot.KafkaFeeds;
import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.TopicTailer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link IndexFeeds} from Kafka: one {@link TopicTailer} per topic, built from the service's consumer settings; a
 * shard reads kv-events through a {@link ShardedKvFeed} of its consumer group instead.
 */
public final class KafkaIndexFeeds implements IndexFeeds {

    private final Map<String, Object> consumerConfig;
    private final KafkaFeeds registry;
    private final Clock clock;
    private final List<TopicTailer<?>> tailers = new ArrayList<>();
    private volatile TopicTailer<WorkerStatus> membership;
    private volatile TopicTailer<KvEventBatch> kv;
    /** The consumer group of the shards, or null: this indexer reads every partition. */
    private final String shardGroup;
    private volatile ShardedKvFeed sharded;

    public KafkaIndexFeeds(Map<String, Object> consumerConfig, KafkaFeeds registry, Clock clock) {
        this(consumerConfig, registry, clock, null);
    }

    /** @param shardGroup the consumer group this indexer shards kv-events with, or null to read every partition */
    public KafkaIndexFeeds(Map<String, Object> consumerConfig, KafkaFeeds registry, Clock clock, String shardGroup) {
        this.consumerConfig = consumerConfig;
        this.registry = registry;
        this.clock = clock;
        this.shardGroup = shardGroup;
    }

    @Override
    public synchronized void startMembership(Sink sink) {
        membership = registry.add(new TopicTailer<>("indexer", TopicTailer.stateFeed(consumerConfig), Topics.WORKERS.name(),
                new ProtoDeserializer.WorkerStatuses(), TopicTailer.Start.EARLIEST, Map.of(),
                records -> sink.statuses(values(records)), clock));
        tailers.add(membership.start());
    }

    @Override
    public boolean membershipCaughtUp() {
        TopicTailer<WorkerStatus> m = membership;
        return m != null && m.caughtUpOnce();
    }

    @Override
    public synchronized void startKvAndLoad(Map<Integer, Long> kvFrom, Sink sink) {
        if (shardGroup != null) {
            sharded = new ShardedKvFeed(consumerConfig, shardGroup, sink, clock).start();
            startLoad(sink);
            return;
        }
        Map<TopicPartition, Long> start = new HashMap<>();
        kvFrom.forEach((p, o) -> start.put(new TopicPartition(Topics.KV_EVENTS.name(), p), o));
        kv = registry.add(new TopicTailer<>("indexer", consumerConfig, Topics.KV_EVENTS.name(),
                new ProtoDeserializer.KvEventBatches(), TopicTailer.Start.EARLIEST, start, records -> {
                    List<KvRecord> out = new ArrayList<>(records.size());
                    for (ConsumerRecord<String, KvEventBatch> r : records) {
                        out.add(new KvRecord(r.partition(), r.offset(), r.value()));
                    }
                    sink.kvRecords(out);
                }, clock));
        tailers.add(kv.start());
        startLoad(sink);
    }

    private void startLoad(Sink sink) {
        TopicTailer<WorkerLoad> load = registry.add(new TopicTailer<>("indexer", TopicTailer.stateFeed(consumerConfig), Topics.WORKER_LOAD.name(),
                new ProtoDeserializer.WorkerLoads(), TopicTailer.Start.LATEST, Map.of(),
                records -> sink.loads(values(records)), clock));
        tailers.add(load.start());
    }

    private static <V> List<V> values(List<ConsumerRecord<String, V>> records) {
        List<V> out = new ArrayList<>(records.size());
        for (ConsumerRecord<String, V> r : records) {
            if (r.value() != null) {
                out.add(r.value());
            }
        }
        return out;
    }

    @Override
    public boolean membershipHealthy() {
        TopicTailer<WorkerStatus> m = membership;
        return m != null && m.healthy();
    }

    @Override
    public long membershipUnhealthySinceMs() {
        TopicTailer<WorkerStatus> m = membership;
        return m == null ? -1 : m.unhealthySinceMs();
    }

    @Override
    public long kvLag() {
        ShardedKvFeed s = sharded;
        if (s != null) {
            return s.lag();
        }
        TopicTailer<KvEventBatch> t = kv;
        return t == null ? -1 : t.lag();
    }

    @Override
    public synchronized void close() {
        if (sharded != null) {
            sharded.close();
            sharded = null;
        }
        for (TopicTailer<?> t : tailers) {
            t.close();
            registry.remove(t);
        }
        tailers.clear();
        membership = null;
        kv = null;
    }
}
