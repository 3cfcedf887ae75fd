package io.flotilla.indexer.bench;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.indexer.service.IndexerProperties;
import io.flotilla.indexer.service.IndexService;
import io.flotilla.indexer.service.KafkaIndexFeeds;
import io.flotilla.kafka.boot.KafkaFeeds;
import io.flotilla.protocol.kafka.ProtoSerializer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.BlockStored;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.StoredBlock;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

/**
 * Time to rebuild an index of {@code pairs} resident (block, worker) pairs by replaying
 * flotilla.kv-events from a real broker, and to restore it from a snapshot (+ replay of nothing).
 *
 * <pre>
 * ./mvnw -q -pl kv-indexer-service test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.flotilla.indexer.bench.IndexRebuildBenchmark -Dexec.args="64 1000000"
 * </pre>
 */
public final class IndexRebuildBenchmark {

    public static void main(String[] args) throws Exception {
        int workers = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        long pairs = args.length > 1 ? Long.parseLong(args[1]) : 1_000_000;
        int perBatch = 128;
        Path dir = Files.createTempDirectory("flotilla-rebuild-bench-");
        try (KafkaBroker kafka = new KafkaBroker(KafkaBroker.Config.forTests(dir.resolve("kafka"))).start()) {
            long now = System.currentTimeMillis();
            try (var producer = new KafkaProducer<>(Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    kafka.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20,
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"), new StringSerializer(), new ProtoSerializer<>())) {
                long perWorker = pairs / workers;
                for (int w = 0; w < workers; w++) {
                    String id = "bench-" + w;
                    producer.send(new ProducerRecord<>(Topics.WORKERS.name(), id, WorkerStatus.newBuilder().setWorkerId(id)
                            .setEpoch(w + 1).setState(WorkerState.WORKER_STATE_READY).setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                            .setModel("m").setBlockSize(16).setLeaseMs(3_600_000).setTs(now).build()));
                    long seq = 0;
                    for (long b = 0; b < perWorker; b += perBatch) {
                        BlockStored.Builder stored = BlockStored.newBuilder();
                        for (long i = b; i < Math.min(perWorker, b + perBatch); i++) {
                            long h = (w * 0x9E3779B97F4A7C15L) ^ (i * 0xC2B2AE3D27D4EB4FL) ^ i;
                            stored.addBlocks(StoredBlock.newBuilder().setSeqHash(h).setLocalHash(h));
                        }
                        producer.send(new ProducerRecord<>(Topics.KV_EVENTS.name(), id, KvEventBatch.newBuilder()
                                .setWorkerId(id).setEpoch(w + 1).setSeq(++seq).setTs(now).setBlockSize(16).setModel("m")
                                .addEvents(KvEvent.newBuilder().setStored(stored)).build()));
                    }
                }
                producer.flush();
            }
            long expected = (pairs / workers) * workers;
            IndexerProperties rebuild = properties(dir.resolve("snapshots"), true);
            long t0 = System.nanoTime();
            IndexService replay = new IndexService(rebuild, feeds(kafka), Clock.systemUTC());
            replay.start();
            while (replay.applier().index().residentPairs() < expected) {
                replay.tick(); // the KV feed starts on a tick once membership is read
                Thread.sleep(20);
            }
            double replaySeconds = (System.nanoTime() - t0) / 1e9;
            replay.close(); // writes the snapshot
            long t1 = System.nanoTime();
            IndexService restore = new IndexService(properties(dir.resolve("snapshots"), false), feeds(kafka),
                    Clock.systemUTC());
            restore.start();
            while (restore.applier().index().residentPairs() < expected || restore.consumerLag() != 0) {
                restore.tick();
                Thread.sleep(20);
            }
            double restoreSeconds = (System.nanoTime() - t1) / 1e9;
            restore.close();
            System.out.printf("pairs=%d workers=%d: rebuild by Kafka replay %.2f s (membership first), "
                    + "restore from snapshot + catch-up %.2f s%n", expected, workers, replaySeconds, restoreSeconds);
        }
    }

    private static IndexerProperties properties(Path snapshots, boolean rebuild) {
        return new IndexerProperties(0, snapshots.toString(), Duration.ofHours(1), 3, rebuild, 4, Duration.ofSeconds(2), 3,
                Duration.ofMillis(250), Duration.ofSeconds(15), IndexerProperties.Sharding.OFF);
    }

    private static KafkaIndexFeeds feeds(KafkaBroker kafka) {
        return new KafkaIndexFeeds(kafka.clientConfig(), new KafkaFeeds(), Clock.systemUTC());
    }
}
