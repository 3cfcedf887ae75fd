package io.flotilla.indexer.it;

import com.google.protobuf.MessageLite;
import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.indexer.service.IndexerProperties;
import io.flotilla.indexer.core.WorkerMatch;
import io.flotilla.indexer.service.IndexService;
import io.flotilla.indexer.service.IndexShard;
import io.flotilla.indexer.service.KafkaIndexFeeds;
import io.flotilla.kafka.boot.KafkaFeeds;
import io.flotilla.protocol.kafka.ProtoSerializer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.kafka.WorkerPartitions;
import io.flotilla.protocol.v1.BlockStored;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.StoredBlock;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two indexer shards of one consumer group on the real broker, against one indexer that reads every partition and
 * against the content the test itself wrote: the shards split the partitions and their merged FindMatches answers are
 * the single indexer's; with one shard closed the other takes every partition (from the closed shard's snapshots
 * plus replay) and answers for every worker; with it started again the partitions split again, still equal.
 */
@ExtendWith(KafkaBrokerExtension.class)
class ShardedIndexerKafkaTest {

    private static final int WORKERS = 12;
    private static final int PROMPTS = 6;
    private static final int BLOCKS = 24;
    private static final Duration CONVERGE = Duration.ofSeconds(20);

    private final String run = "shard-it-" + Long.toHexString(System.nanoTime());
    private final SplittableRandom random = new SplittableRandom(32);
    /** What each worker holds, as the test wrote it: the reference the answers are checked against. */
    private final Map<String, Set<Long>> held = new TreeMap<>();
    private final Map<String, Long> seqs = new HashMap<>();
    private final long[][] prompts = new long[PROMPTS][BLOCKS];
    private final List<IndexService> services = new ArrayList<>();
    private final ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        ticks.shutdownNow();
        services.forEach(IndexService::close);
    }

    @Test
    void shardsSplitThePartitionsTakeOverAndGiveBackWithAnswersEqualToOneIndexer(KafkaBroker kafka, @TempDir Path single,
                                                                                 @TempDir Path shared) {
        for (int p = 0; p < PROMPTS; p++) {
            for (int b = 0; b < BLOCKS; b++) {
                prompts[p][b] = random.nextLong();
            }
        }
        try (KafkaProducer<String, MessageLite> producer = producer(kafka)) {
            for (int w = 0; w < WORKERS; w++) {
                String id = run + "-w" + w;
                producer.send(new ProducerRecord<>(Topics.WORKERS.name(), id, WorkerStatus.newBuilder().setWorkerId(id)
                        .setEpoch(7).setState(WorkerState.WORKER_STATE_READY).setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                        .setModel("m").setBlockSize(16).setLeaseMs(600_000).setTs(System.currentTimeMillis()).build()));
            }
            storeSome(producer);

            IndexService one = start(kafka, single, false);
            IndexService a = start(kafka, shared, true);
            IndexService b = start(kafka, shared, true);
            await().atMost(CONVERGE).untilAsserted(() -> {
                assertThat(answers(one)).isEqualTo(expected());
                assertSplit(a, b);
                assertThat(merged(a, b)).isEqualTo(expected());
            });

            int keptByA = a.coverage().partitions().size();
            long restoredByA = a.partitionsRestored(); // partitions moved while the group formed were restored too
            storeSome(producer);
            b.close(); // a shard goes away: its group membership ends, its partitions' snapshots are on disk
            services.remove(b);
            storeSome(producer);
            await().atMost(CONVERGE).untilAsserted(() -> {
                assertThat(a.coverage().partitions()).hasSize(Topics.KV_EVENTS.partitions());
                assertThat(answers(a)).isEqualTo(expected()).isEqualTo(answers(one));
            });
            // the closed shard wrote its partitions' snapshots before it left: they were restored, not replayed
            assertThat(a.partitionsRestored() - restoredByA).isPositive()
                    .isLessThanOrEqualTo(Topics.KV_EVENTS.partitions() - keptByA);

            IndexService again = start(kafka, shared, true);
            storeSome(producer);
            await().atMost(CONVERGE).untilAsserted(() -> {
                assertSplit(a, again);
                assertThat(merged(a, again)).isEqualTo(expected()).isEqualTo(answers(one));
            });
            assertThat(a.rebalances()).isGreaterThanOrEqualTo(3);
            // what it takes over from a was written when a gave it back, so it is restored, not replayed
            assertThat(again.partitionsRestored()).isPositive();
        }
    }

    /** Each shard covers some partitions, none twice, all together, and answers only for workers of its own. */
    private void assertSplit(IndexService a, IndexService b) {
        IndexShard.Coverage ca = a.coverage();
        IndexShard.Coverage cb = b.coverage();
        assertThat(ca.partitions()).isNotEmpty();
        assertThat(cb.partitions()).isNotEmpty();
        assertThat(Collections.disjoint(ca.partitions(), cb.partitions())).as("%s and %s", ca, cb).isTrue();
        Set<Integer> all = new TreeSet<>(ca.partitions());
        all.addAll(cb.partitions());
        assertThat(all).hasSize(Topics.KV_EVENTS.partitions());
        for (IndexService s : List.of(a, b)) {
            for (Map<String, Integer> answer : answers(s)) {
                for (String worker : answer.keySet()) {
                    assertThat(s.coverage().partitions()).contains(WorkerPartitions.of(worker, Topics.KV_EVENTS.partitions()));
                }
            }
        }
    }

    /** Each worker stores the leading blocks of a few prompts, continuing its sequence. */
    private void storeSome(KafkaProducer<String, MessageLite> producer) {
        for (int w = 0; w < WORKERS; w++) {
            String id = run + "-w" + w;
            long[] prompt = prompts[random.nextInt(PROMPTS)];
            int n = 1 + random.nextInt(BLOCKS);
            BlockStored.Builder stored = BlockStored.newBuilder();
            for (int i = 0; i < n; i++) {
                stored.addBlocks(StoredBlock.newBuilder().setSeqHash(prompt[i]).setLocalHash(prompt[i]));
                held.computeIfAbsent(id, k -> new HashSet<>()).add(prompt[i]);
            }
            long seq = seqs.merge(id, 1L, Long::sum);
            producer.send(new ProducerRecord<>(Topics.KV_EVENTS.name(), id, KvEventBatch.newBuilder().setWorkerId(id)
                    .setEpoch(7).setSeq(seq).setTs(System.currentTimeMillis())
                    .addEvents(KvEvent.newBuilder().setStored(stored)).build()));
        }
        producer.flush();
    }

    /** Per prompt, the leading blocks each of this run's workers holds (workers holding none left out). */
    private List<Map<String, Integer>> expected() {
        List<Map<String, Integer>> out = new ArrayList<>();
        for (long[] prompt : prompts) {
            Map<String, Integer> m = new TreeMap<>();
            held.forEach((id, blocks) -> {
                int n = 0;
                while (n < prompt.length && blocks.contains(prompt[n])) {
                    n++;
                }
                if (n > 0) {
                    m.put(id, n);
                }
            });
            out.add(m);
        }
        return out;
    }

    private List<Map<String, Integer>> answers(IndexService s) {
        List<Map<String, Integer>> out = new ArrayList<>();
        for (long[] prompt : prompts) {
            Map<String, Integer> m = new TreeMap<>();
            for (WorkerMatch match : s.findMatches("m", 16, prompt)) {
                if (match.workerId().startsWith(run)) {
                    m.put(match.workerId(), match.matchedBlocks());
                }
            }
            out.add(m);
        }
        return out;
    }

    /** The shards' answers put together, as the router merges them (their workers never overlap). */
    private List<Map<String, Integer>> merged(IndexService a, IndexService b) {
        List<Map<String, Integer>> ma = answers(a);
        List<Map<String, Integer>> mb = answers(b);
        List<Map<String, Integer>> out = new ArrayList<>();
        for (int i = 0; i < ma.size(); i++) {
            assertThat(Collections.disjoint(ma.get(i).keySet(), mb.get(i).keySet())).as("workers both shards answer").isTrue();
            Map<String, Integer> m = new TreeMap<>(ma.get(i));
            m.putAll(mb.get(i));
            out.add(m);
        }
        return out;
    }

    private IndexService start(KafkaBroker kafka, Path dir, boolean shard) {
        IndexerProperties properties = new IndexerProperties(0, dir.toString(), Duration.ofHours(1), 3, false, 2,
                Duration.ofSeconds(1), 1, Duration.ofMillis(100), Duration.ofSeconds(5),
                new IndexerProperties.Sharding(shard, run));
        Map<String, Object> consumer = new HashMap<>(kafka.clientConfig());
        // a small group heartbeat: a member that joins or leaves is noticed within a fraction of a second
        consumer.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 100);
        consumer.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6000);
        IndexService s = new IndexService(properties,
                new KafkaIndexFeeds(consumer, new KafkaFeeds(), Clock.systemUTC(), shard ? run : null), Clock.systemUTC());
        s.start();
        services.add(s);
        ticks.scheduleWithFixedDelay(() -> {
            if (services.contains(s)) {
                s.tick();
            }
        }, 0, 100, TimeUnit.MILLISECONDS);
        return s;
    }

    private static KafkaProducer<String, MessageLite> producer(KafkaBroker kafka) {
        Map<String, Object> conf = new HashMap<>(kafka.clientConfig());
        conf.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return new KafkaProducer<>(conf, new StringSerializer(), new ProtoSerializer<MessageLite>());
    }
}
