package io.flotilla.router.client;

import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.kafka.WorkerPartitions;
import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.FindMatchesResponse;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.protocol.v1.WorkerMatch;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.flotilla.router.core.KvOverlap;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The merge of indexer shards' answers: a missed shard costs only its own workers' overlap (and is counted). */
class ShardedIndexerMergeTest {

    private static final int PARTITIONS = 8;
    /** Two workers per partition: w-0 … w-n, sorted into the partitions Kafka's partitioner gives them. */
    private final Map<Integer, List<String>> byPartition = new HashMap<>();

    ShardedIndexerMergeTest() {
        for (int i = 0; !allTwo(); i++) {
            String w = "w-" + i;
            List<String> list = byPartition.computeIfAbsent(WorkerPartitions.of(w, PARTITIONS), p -> new ArrayList<>());
            if (list.size() < 2) {
                list.add(w);
            }
        }
    }

    private boolean allTwo() {
        return byPartition.size() == PARTITIONS && byPartition.values().stream().allMatch(l -> l.size() == 2);
    }

    /** Shard A has partitions 0–3, B 4–7; each worker's true overlap is 10 + its partition, the approximation 1. */
    private Optional<IndexerClient.Answer> shard(int from, int to) {
        Map<String, KvOverlap> m = new HashMap<>();
        for (int p = from; p < to; p++) {
            for (String w : byPartition.get(p)) {
                m.put(w, KvOverlap.deviceOnly(10 + p));
            }
        }
        List<Integer> parts = new ArrayList<>();
        for (int p = from; p < to; p++) {
            parts.add(p);
        }
        return Optional.of(new IndexerClient.Answer(m, parts, PARTITIONS));
    }

    private Map<String, Integer> approx() {
        Map<String, Integer> m = new HashMap<>();
        byPartition.values().forEach(ws -> ws.forEach(w -> m.put(w, 1)));
        return m;
    }

    @Test
    void bothShardsAnsweringGiveTheUnionAndNeverAskTheApproximation() {
        AtomicInteger asked = new AtomicInteger();
        Map<String, KvOverlap> merged = ShardedIndexer.merge(List.of(shard(0, 4), shard(4, 8)), () -> {
            asked.incrementAndGet();
            return approx();
        }).orElseThrow();
        assertThat(merged).hasSize(2 * PARTITIONS);
        byPartition.forEach((p, ws) -> ws.forEach(w -> assertThat(merged.get(w)).isEqualTo(KvOverlap.deviceOnly(10 + p))));
        assertThat(asked).hasValue(0);
    }

    @Test
    void aMissedShardCostsOnlyItsWorkersWhichArePricedFromTheApproximation() {
        Map<String, KvOverlap> merged = ShardedIndexer.merge(List.of(shard(0, 4), Optional.empty()), this::approx).orElseThrow();
        byPartition.forEach((p, ws) -> ws.forEach(w -> assertThat(merged.get(w))
                .as("worker %s of partition %d", w, p)
                .isEqualTo(KvOverlap.deviceOnly(p < 4 ? 10 + p : 1))));
    }

    @Test
    void anAnsweredZeroIsNotReplacedByTheApproximation() {
        // shard A answers without w of partition 0 (it holds none of the prompt): the approximation must not add it
        Map<String, KvOverlap> m = new HashMap<>(shard(0, 4).orElseThrow().matches());
        String silent = byPartition.get(0).get(0);
        m.remove(silent);
        Optional<IndexerClient.Answer> a = Optional.of(new IndexerClient.Answer(m, List.of(0, 1, 2, 3), PARTITIONS));
        Map<String, KvOverlap> merged = ShardedIndexer.merge(List.of(a, Optional.empty()), this::approx).orElseThrow();
        assertThat(merged).doesNotContainKey(silent);
    }

    @Test
    void noShardAnsweringIsNoAnswerAndAShardMidRebalanceCoversNothing() {
        assertThat(ShardedIndexer.merge(List.of(Optional.empty(), Optional.empty()), this::approx)).isEmpty();
        Optional<IndexerClient.Answer> rebalancing = Optional.of(new IndexerClient.Answer(Map.of(), List.of(), PARTITIONS));
        Map<String, KvOverlap> merged = ShardedIndexer.merge(List.of(shard(0, 4), rebalancing), this::approx).orElseThrow();
        byPartition.get(6).forEach(w -> assertThat(merged.get(w)).isEqualTo(KvOverlap.deviceOnly(1)));
    }

    /** Over real gRPC: one shard answers for partitions 0–3, the other is down; the merge and the miss counter. */
    @Test
    void aShardThatIsDownIsCountedAndOnlyItsWorkersComeFromTheApproximation() throws Exception {
        String ours = byPartition.get(2).get(0);
        String theirs = byPartition.get(6).get(0);
        IndexerServiceGrpc.IndexerServiceImplBase shardA = new IndexerServiceGrpc.IndexerServiceImplBase() {
            @Override
            public void findMatches(FindMatchesRequest request, StreamObserver<FindMatchesResponse> observer) {
                observer.onNext(FindMatchesResponse.newBuilder()
                        .addMatches(WorkerMatch.newBuilder().setWorkerId(ours).setMatchedBlocks(5))
                        .addAllPartitions(List.of(0, 1, 2, 3)).setPartitionCount(PARTITIONS).build());
                observer.onCompleted();
            }
        };
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (GrpcEndpoint server = new GrpcEndpoint("shard-a", "127.0.0.1", 0, List.of(shardA)).start();
             IndexerClient a = new IndexerClient("127.0.0.1:" + server.port(), Duration.ofSeconds(5));
             IndexerClient b = new IndexerClient("127.0.0.1:1", Duration.ofSeconds(5))) {
            ShardedIndexer sharded = new ShardedIndexer(List.of(a, b), seq -> Map.of(ours, 1, theirs, 2), registry);
            CompletableFuture<Optional<Map<String, KvOverlap>>> answer = new CompletableFuture<>();
            sharded.findMatches("m", 16, new long[]{1, 2, 3}, answer::complete);
            assertThat(answer.get(10, TimeUnit.SECONDS)).contains(Map.of(ours, KvOverlap.deviceOnly(5),
                    theirs, KvOverlap.deviceOnly(2)));
            assertThat(sharded.misses()).containsExactly(0L, 1L);
            assertThat(registry.get("flotilla.router.indexer.shard_misses").tag("shard", "127.0.0.1:1").counter().count())
                    .isEqualTo(1.0);
        }
    }

    @Test
    void anUnshardedIndexerCoversEveryWorker() {
        Optional<IndexerClient.Answer> whole = Optional.of(new IndexerClient.Answer(Map.of("w-0", KvOverlap.deviceOnly(3)),
                List.of(), 0));
        assertThat(ShardedIndexer.merge(List.of(whole), this::approx).orElseThrow())
                .isEqualTo(Map.of("w-0", KvOverlap.deviceOnly(3)));
    }
}
