package io.flotilla.indexer.service;

import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.KvEventBatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The KV feed of an indexer shard: a member of a Kafka consumer group over {@code flotilla.kv-events}, so that the
 * shards of one group split its partitions (and with them the workers, keyed by id) between them. Nothing is
 * committed to Kafka: where a partition is read from is the shard's own business (its snapshot's offsets, else the
 * earliest offset), decided when the partition is assigned.
 *
 * <p>On every assignment ({@link ConsumerRebalanceListener#onPartitionsAssigned}, eager or cooperative) the whole
 * current assignment goes to {@link IndexFeeds.Sink#assigned}, which rebuilds the shard's index for it on the
 * indexer's writer and answers where each partition resumes; the consumer seeks there before it fetches again. The
 * callback runs on this feed's thread after every record it polled was handed over, so the writer has applied them
 * all when it rebuilds.
 */
final class ShardedKvFeed implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ShardedKvFeed.class);

    private final KafkaConsumer<String, KvEventBatch> consumer;
    private final IndexFeeds.Sink sink;
    private final Clock clock;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long lag = -1;

    /**
     * @param consumerConfig the service's consumer settings; group id, offsets and deserializers are the feed's,
     *                       and group timeouts given there (session, heartbeat) win over the feed's defaults
     */
    ShardedKvFeed(Map<String, Object> consumerConfig, String groupId, IndexFeeds.Sink sink, Clock clock) {
        this.sink = sink;
        this.clock = clock;
        Map<String, Object> conf = new HashMap<>();
        conf.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        conf.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 50);
        conf.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1000);
        conf.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000);
        conf.putAll(consumerConfig);
        conf.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
        conf.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
        conf.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        conf.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        conf.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        conf.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        // a rebalance moves only the partitions that must move: the others stay indexed, nothing is snapshot for them
        conf.putIfAbsent(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        conf.put(ConsumerConfig.CLIENT_ID_CONFIG, "indexer-shard-" + Topics.KV_EVENTS.name());
        this.consumer = new KafkaConsumer<>(conf, new StringDeserializer(), new ProtoDeserializer.KvEventBatches());
        this.thread = new Thread(this::run, "indexer-shard-" + Topics.KV_EVENTS.name());
        this.thread.setDaemon(true);
    }

    ShardedKvFeed start() {
        thread.start();
        return this;
    }

    /** kv-events records of the assigned partitions not yet read, as of the last check; -1 unknown. */
    long lag() {
        return lag;
    }

    private void run() {
        long nextCheck = 0;
        try {
            consumer.subscribe(List.of(Topics.KV_EVENTS.name()), new Rebalance());
            while (running) {
                ConsumerRecords<String, KvEventBatch> records = consumer.poll(Duration.ofMillis(100));
                if (!records.isEmpty()) {
                    List<IndexFeeds.KvRecord> out = new ArrayList<>(records.count());
                    for (ConsumerRecord<String, KvEventBatch> r : records) {
                        out.add(new IndexFeeds.KvRecord(r.partition(), r.offset(), r.value()));
                    }
                    sink.kvRecords(out);
                }
                long now = clock.millis();
                if (now >= nextCheck) {
                    checkLag();
                    nextCheck = now + 1000;
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            log.error("indexer shard feed stopped", e);
        } finally {
            consumer.close(Duration.ofSeconds(2)); // leaves the group: the other shards take the partitions at once
        }
    }

    private void checkLag() {
        try {
            Set<TopicPartition> parts = consumer.assignment();
            Map<TopicPartition, Long> ends = consumer.endOffsets(parts, Duration.ofMillis(1500));
            long total = 0;
            for (TopicPartition tp : parts) {
                long p = consumer.position(tp, Duration.ofMillis(500));
                total += Math.max(0, ends.getOrDefault(tp, p) - p);
            }
            lag = total;
        } catch (WakeupException e) {
            throw e;
        } catch (RuntimeException e) {
            lag = -1;
        }
    }

    /** Hands every new assignment to the sink and seeks where it says; revocations wait for the assignment. */
    private final class Rebalance implements ConsumerRebalanceListener {

        /**
         * With the cooperative assignor only the partitions that move are revoked; their snapshots are written before
         * this shard rejoins, so the group's next assignment of them finds them. What this shard keeps stays indexed,
         * and the next {@link #onPartitionsAssigned} drops the rest.
         */
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                Set<Integer> given = new TreeSet<>();
                partitions.forEach(tp -> given.add(tp.partition()));
                sink.revoked(given);
            }
        }

        /** Lost (this shard missed its session): another shard may own them already, so nothing is written for them. */
        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            log.warn("indexer shard lost partitions {} (its group session expired)",
                    partitions.stream().map(TopicPartition::partition).sorted().toList());
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> added) {
            Set<TopicPartition> owned = consumer.assignment();
            int count = consumer.partitionsFor(Topics.KV_EVENTS.name()).size();
            Set<Integer> partitions = new TreeSet<>();
            owned.forEach(tp -> partitions.add(tp.partition()));
            Map<Integer, Long> from = sink.assigned(partitions, count);
            List<TopicPartition> fromStart = new ArrayList<>();
            for (TopicPartition tp : owned) {
                Long offset = from.get(tp.partition());
                if (offset != null) {
                    consumer.seek(tp, offset);
                } else {
                    fromStart.add(tp);
                }
            }
            consumer.seekToBeginning(fromStart);
            log.info("indexer shard assigned partitions {} of {} (resuming at {}, from the start: {})", partitions, count,
                    from, fromStart.stream().map(TopicPartition::partition).toList());
        }
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
