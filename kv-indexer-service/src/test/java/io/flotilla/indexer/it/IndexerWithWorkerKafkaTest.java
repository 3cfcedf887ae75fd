package io.flotilla.indexer.it;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.indexer.IndexerApplication;
import io.flotilla.indexer.core.WorkerState;
import io.flotilla.indexer.core.WorkerView;
import io.flotilla.indexer.service.IndexService;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.KvSnapshotRequest;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.WorkerMatch;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.worker.WorkerApplication;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The indexer against a real broker and a real worker agent: it follows the worker's KV events,
 * survives its own restart through snapshot + replay with the same content as a full replay, and
 * drops a worker's blocks when the worker restarts with a new epoch.
 */
@ExtendWith(KafkaBrokerExtension.class)
class IndexerWithWorkerKafkaTest {

    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16);

    @Test
    void followsAWorkerAcrossIndexerAndWorkerRestarts(KafkaBroker kafka, @TempDir Path snapshots, @TempDir Path fresh) {
        String workerId = "idx-it-" + System.nanoTime();
        int workerGrpc = KafkaBroker.freePort();
        int workerMgmt = KafkaBroker.freePort();
        int[] promptA = prompt(1, 200);
        int[] promptB = prompt(2, 300);

        ConfigurableApplicationContext worker = startWorker(kafka, workerId, workerGrpc, workerMgmt);
        ConfigurableApplicationContext indexer = startIndexer(kafka, snapshots, false);
        try {
            generate(workerGrpc, "a1", promptA);
            await().atMost(Duration.ofSeconds(20)).until(() -> matched(indexer, workerId, promptA) == 12);
            WorkerView live = view(indexer, workerId).orElseThrow();
            assertThat(live.state()).isEqualTo(WorkerState.LIVE);
            assertThat(residentOf(indexer, workerId)).isEqualTo(workerSet(workerGrpc));

            indexer.close(); // writes a shutdown snapshot
            generate(workerGrpc, "b1", promptB); // traffic while the indexer is down

            ConfigurableApplicationContext restored = startIndexer(kafka, snapshots, false);
            ConfigurableApplicationContext replayed = startIndexer(kafka, fresh, true);
            try {
                Set<Long> expected = workerSet(workerGrpc);
                await().atMost(Duration.ofSeconds(20)).until(() -> residentOf(restored, workerId).equals(expected)
                        && residentOf(replayed, workerId).equals(expected));
                assertThat(matched(restored, workerId, promptB)).isEqualTo(18);

                // The worker restarts: a new process, a new epoch, an empty cache.
                worker.close();
                worker = startWorker(kafka, workerId, workerGrpc, workerMgmt);
                long newEpoch = epochOf(workerGrpc);
                await().atMost(Duration.ofSeconds(20)).until(() -> view(restored, workerId)
                        .map(v -> v.epoch() == newEpoch && v.blocks() == 0).orElse(false));
                assertThat(matched(restored, workerId, promptA)).isZero();
                assertThat(grpcMatches(restored, promptB)).doesNotContainKey(workerId);
            } finally {
                restored.close();
                replayed.close();
            }
        } finally {
            worker.close();
            indexer.close();
        }
    }

    private static int[] prompt(int salt, int n) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = salt * 10_000 + i;
        }
        return p;
    }

    private static ConfigurableApplicationContext startWorker(KafkaBroker kafka, String id, int grpc, int mgmt) {
        return new SpringApplicationBuilder(WorkerApplication.class).run(
                "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=" + mgmt,
                "--flotilla.worker.id=" + id, "--flotilla.worker.grpc-port=" + grpc,
                "--flotilla.worker.advertised-host=127.0.0.1", "--flotilla.worker.sim.total-blocks=1024",
                "--flotilla.worker.sim.kv-bytes-per-block=0", "--flotilla.worker.sim.speedup=50");
    }

    private static ConfigurableApplicationContext startIndexer(KafkaBroker kafka, Path dir, boolean rebuild) {
        return new SpringApplicationBuilder(IndexerApplication.class).run(
                "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=0",
                "--flotilla.indexer.grpc-port=" + KafkaBroker.freePort(), "--flotilla.indexer.snapshot-dir=" + dir,
                "--flotilla.indexer.snapshot-interval=1h", "--flotilla.indexer.rebuild-on-start=" + rebuild);
    }

    private static void generate(int port, String id, int[] prompt) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        try {
            GenerateRequest.Builder r = GenerateRequest.newBuilder().setRequestId(id)
                    .setStop(StopConditions.newBuilder().setMaxTokens(4).setIgnoreEos(true));
            Arrays.stream(prompt).forEach(r::addTokenIds);
            WorkerServiceGrpc.newBlockingStub(ch).generate(r.build()).forEachRemaining(c -> { });
        } finally {
            ch.shutdownNow();
        }
    }

    private static Set<Long> workerSet(int port) {
        return new HashSet<>(snapshot(port).getSeqHashesList());
    }

    private static long epochOf(int port) {
        return snapshot(port).getEpoch();
    }

    private static KvSnapshot snapshot(int port) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        try {
            return WorkerServiceGrpc.newBlockingStub(ch).getKvSnapshot(KvSnapshotRequest.getDefaultInstance());
        } finally {
            ch.shutdownNow();
        }
    }

    private static IndexService service(ConfigurableApplicationContext ctx) {
        return ctx.getBean(IndexService.class);
    }

    private static Optional<WorkerView> view(ConfigurableApplicationContext ctx, String workerId) {
        return service(ctx).applier().worker(workerId);
    }

    private static Set<Long> residentOf(ConfigurableApplicationContext ctx, String workerId) {
        Set<Long> out = new HashSet<>();
        for (long h : service(ctx).applier().index().blocksOf(workerId)) {
            out.add(h);
        }
        return out;
    }

    private static int matched(ConfigurableApplicationContext ctx, String workerId, int[] prompt) {
        return grpcMatches(ctx, prompt).getOrDefault(workerId, 0);
    }

    /** FindMatches over real gRPC. */
    private static java.util.Map<String, Integer> grpcMatches(ConfigurableApplicationContext ctx, int[] prompt) {
        int port = Integer.parseInt(ctx.getEnvironment().getProperty("flotilla.indexer.grpc-port"));
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        try {
            FindMatchesRequest.Builder r = FindMatchesRequest.newBuilder().setModel("flotilla-sim").setBlockSize(16);
            Arrays.stream(HASHER.seqHashes(prompt)).forEach(r::addSeqHashes);
            java.util.Map<String, Integer> out = new java.util.HashMap<>();
            for (WorkerMatch m : IndexerServiceGrpc.newBlockingStub(ch).findMatches(r.build()).getMatchesList()) {
                out.put(m.getWorkerId(), m.getMatchedBlocks());
            }
            return out;
        } finally {
            ch.shutdownNow();
        }
    }
}
