package io.flotilla.protocol.kafka;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Reads every partition of one topic on one thread (manual assignment, no consumer group: every
 * replica of a service sees everything) and hands each poll's records to a handler, in partition
 * order. Malformed values arrive as {@code null} and are skipped by the handler.
 *
 * <p>It also answers whether the feed is healthy: once a second it asks the broker for the end
 * offsets; while that fails the feed is unhealthy since the first failure. Consumers use this to
 * freeze leases instead of expiring every worker when Kafka, not the workers, is down.
 */
public final class TopicTailer<V> implements AutoCloseable {

    /** Where reading starts. */
    public enum Start { EARLIEST, LATEST }

    private static final Logger log = LoggerFactory.getLogger(TopicTailer.class);

    private final String topic;
    private final KafkaConsumer<String, V> consumer;
    private final Consumer<List<ConsumerRecord<String, V>>> handler;
    private final Clock clock;
    private final Start start;
    private final Map<TopicPartition, Long> startOffsets;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long unhealthySinceMs = -1;
    private volatile boolean assigned;
    private volatile long lag = -1;
    private volatile Map<TopicPartition, Long> positions = Map.of();
    private volatile String lastFailure = "";
    private volatile boolean caughtUpOnce;
    /** The end offsets the first health check saw: reaching them is the first full read. */
    private Map<TopicPartition, Long> firstEnds;

    /**
     * @param consumerConfig the service's consumer settings (bootstrap servers, security, anything from
     *                       {@code spring.kafka.*}); the tailer's own defaults apply only to keys it leaves
     *                       out, and the few the tailer depends on (no auto-commit, its client id) win
     * @param startOffsets   explicit start offsets per partition (e.g. from a snapshot); partitions
     *                       not in it start at {@code start}
     */
    public TopicTailer(String clientId, Map<String, Object> consumerConfig, String topic, Deserializer<V> values,
                       Start start, Map<TopicPartition, Long> startOffsets,
                       Consumer<List<ConsumerRecord<String, V>>> handler, Clock clock) {
        this.topic = topic;
        this.handler = handler;
        this.clock = clock;
        this.start = start;
        this.startOffsets = Map.copyOf(startOffsets);
        Map<String, Object> conf = new HashMap<>();
        conf.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        conf.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 50);
        conf.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 2000);
        conf.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 2000);
        conf.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000);
        conf.putAll(consumerConfig);
        // manual assignment, no group: nothing to commit, and every replica reads everything
        conf.remove(ConsumerConfig.GROUP_ID_CONFIG);
        conf.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
        conf.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
        conf.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        conf.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId + "-" + topic);
        this.consumer = new KafkaConsumer<>(conf, new StringDeserializer(), values);
        this.thread = new Thread(this::run, clientId + "-" + topic);
        this.thread.setDaemon(true);
    }

    /** The broker answers a fetch of a {@link #stateFeed} once this much is there (or the 50 ms wait is over). */
    public static final int STATE_FEED_FETCH_MIN_BYTES = 16 * 1024;

    /**
     * {@code consumerConfig} for a feed read for each key's latest state (membership, load reports), where 50 ms
     * more delay costs nothing: unless the service configured {@code fetch.min.bytes}, the broker holds a fetch
     * until {@value #STATE_FEED_FETCH_MIN_BYTES} bytes are there or its 50 ms wait is over. By default it answers
     * as soon as one record is there, so a fleet's thousand heartbeats a second were read by ~200 fetches a
     * second per consumer (the indexer's at 1,024 workers), each a broker request and a poll's fixed cost; this
     * makes it ~20. Feeds read for every change as it happens (KV events, router sync) keep the default.
     */
    public static Map<String, Object> stateFeed(Map<String, Object> consumerConfig) {
        Map<String, Object> conf = new HashMap<>(consumerConfig);
        conf.putIfAbsent(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, STATE_FEED_FETCH_MIN_BYTES);
        return conf;
    }

    /**
     * The consumer, for a metrics binder that reads its {@code metrics()} (Micrometer's {@code KafkaClientMetrics});
     * nothing else may use it: the tailer's thread owns it.
     */
    public org.apache.kafka.clients.consumer.Consumer<String, V> client() {
        return consumer;
    }

    /** A handler that passes each parsed value to {@code onValue}, skipping malformed records and tombstones. */
    public static <V> Consumer<List<ConsumerRecord<String, V>>> eachValue(Consumer<V> onValue) {
        return records -> {
            for (ConsumerRecord<String, V> r : records) {
                if (r.value() != null) {
                    onValue.accept(r.value());
                }
            }
        };
    }

    public TopicTailer<V> start() {
        thread.start();
        return this;
    }

    /** True while the broker answers (and once the partitions were assigned). */
    public boolean healthy() {
        return assigned && unhealthySinceMs < 0;
    }

    /** When the feed became unhealthy (epoch millis), or -1 while it is healthy. */
    public long unhealthySinceMs() {
        return unhealthySinceMs;
    }

    /** Records between the consumer's position and the end of the topic, as of the last check; -1 unknown. */
    public long lag() {
        return lag;
    }

    /** The topic this tailer reads. */
    public String topic() {
        return topic;
    }

    /**
     * Why the feed is unhealthy (the client's last exception, e.g. an authentication failure), or
     * empty while it is healthy.
     */
    public String lastFailure() {
        return healthy() ? "" : lastFailure;
    }

    /**
     * True once the tailer has read up to the end of the topic at least once (state was loaded): up to the end
     * offsets its first health check saw, or to a moment without lag. A topic a fleet writes thousands of records
     * a second to (load reports of 1,024 workers) never shows a lag of 0 at a health check, so the end as first
     * seen is the mark, as a restoring Kafka Streams store reads to the end offsets it took when it began.
     */
    public boolean caughtUpOnce() {
        return caughtUpOnce;
    }

    /** Next offset to read per partition, as of the last poll. */
    public Map<TopicPartition, Long> positions() {
        return positions;
    }

    private void run() {
        long nextCheck = 0;
        try {
            while (running && !assign()) {
                markUnhealthy();
                sleep(500);
            }
            while (running) {
                ConsumerRecords<String, V> records = consumer.poll(Duration.ofMillis(100));
                if (!records.isEmpty()) {
                    List<ConsumerRecord<String, V>> batch = new ArrayList<>(records.count());
                    records.forEach(batch::add);
                    try {
                        handler.accept(batch);
                    } catch (RuntimeException e) {
                        log.error("{}: handler failed on {} records; continuing", topic, batch.size(), e);
                    }
                }
                long now = clock.millis();
                if (now >= nextCheck) {
                    checkHealth();
                    nextCheck = now + 1000;
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            log.error("{}: consumer stopped", topic, e);
            markUnhealthy();
        } finally {
            consumer.close(Duration.ofSeconds(1));
        }
    }

    private boolean assign() {
        try {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(2));
            if (infos == null || infos.isEmpty()) {
                lastFailure = "topic " + topic + " does not exist";
                return false;
            }
            List<TopicPartition> parts = infos.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(parts);
            List<TopicPartition> fromStart = new ArrayList<>();
            for (TopicPartition tp : parts) {
                Long offset = startOffsets.get(tp);
                if (offset != null) {
                    consumer.seek(tp, offset);
                } else {
                    fromStart.add(tp);
                }
            }
            if (start == Start.EARLIEST) {
                consumer.seekToBeginning(fromStart);
            } else {
                consumer.seekToEnd(fromStart);
            }
            assigned = true;
            unhealthySinceMs = -1;
            return true;
        } catch (RuntimeException e) {
            if (e instanceof WakeupException w) {
                throw w;
            }
            lastFailure = describe(e);
            return false;
        }
    }

    private void checkHealth() {
        try {
            var parts = consumer.assignment();
            Map<TopicPartition, Long> ends = consumer.endOffsets(parts, Duration.ofMillis(1500));
            Map<TopicPartition, Long> pos = new HashMap<>();
            long total = 0;
            for (TopicPartition tp : parts) {
                long p = consumer.position(tp, Duration.ofMillis(500));
                pos.put(tp, p);
                total += Math.max(0, ends.getOrDefault(tp, p) - p);
            }
            positions = Map.copyOf(pos);
            lag = total;
            if (firstEnds == null) {
                firstEnds = Map.copyOf(ends);
            }
            if (total == 0 || reached(firstEnds, pos)) {
                caughtUpOnce = true;
            }
            if (unhealthySinceMs >= 0) {
                log.info("{}: Kafka answers again", topic);
            }
            unhealthySinceMs = -1;
        } catch (WakeupException e) {
            throw e;
        } catch (RuntimeException e) {
            if (unhealthySinceMs < 0) {
                log.warn("{}: Kafka does not answer ({}); treating the feed as unhealthy", topic, e.toString());
            }
            lastFailure = describe(e);
            markUnhealthy();
        }
    }

    /** Whether every partition's position is at or past its offset in {@code target}. */
    static boolean reached(Map<TopicPartition, Long> target, Map<TopicPartition, Long> positions) {
        for (Map.Entry<TopicPartition, Long> e : target.entrySet()) {
            Long p = positions.get(e.getKey());
            if (p == null || p < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    private static String describe(RuntimeException e) {
        return KafkaFailures.describe(e);
    }

    private void markUnhealthy() {
        if (unhealthySinceMs < 0) {
            unhealthySinceMs = clock.millis();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(3000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
