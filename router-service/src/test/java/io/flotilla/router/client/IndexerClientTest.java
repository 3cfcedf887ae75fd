package io.flotilla.router.client;

import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.FindMatchesResponse;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.router.core.KvOverlap;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The router's indexer client over real gRPC: answers, a slow indexer, a dead one. */
class IndexerClientTest {

    @Test
    void aTieredMatchKeepsItsTiersAndAnOldIndexersAnswerIsTheDevicePrefix() {
        var tiered = io.flotilla.protocol.v1.WorkerMatch.newBuilder().setWorkerId("w").setMatchedBlocks(1)
                .setPrefixDeviceBlocks(2).setPrefixHostBlocks(3).setPrefixDiskBlocks(4).build();
        assertThat(IndexerClient.overlapOf(tiered)).isEqualTo(new KvOverlap(1, 2, 3, 4));
        var old = io.flotilla.protocol.v1.WorkerMatch.newBuilder().setWorkerId("w").setMatchedBlocks(5).build();
        assertThat(IndexerClient.overlapOf(old)).isEqualTo(KvOverlap.deviceOnly(5));
    }

    /** An indexer that answers worker-0: 3 blocks after {@code delayMs}. */
    private static final class FakeIndexer extends IndexerServiceGrpc.IndexerServiceImplBase {
        final AtomicLong delayMs = new AtomicLong();
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public void findMatches(FindMatchesRequest request, StreamObserver<FindMatchesResponse> observer) {
            calls.incrementAndGet();
            try {
                Thread.sleep(delayMs.get());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            observer.onNext(FindMatchesResponse.newBuilder()
                    .addMatches(io.flotilla.protocol.v1.WorkerMatch.newBuilder().setWorkerId("worker-0").setMatchedBlocks(3))
                    .build());
            observer.onCompleted();
        }
    }

    @Test
    void answersWhenFastDegradesWhenSlowAndStopsCallingWhenTheBreakerOpens() {
        FakeIndexer fake = new FakeIndexer();
        try (GrpcEndpoint server = new GrpcEndpoint("fake-indexer", "127.0.0.1", 0, List.of(fake)).start();
             IndexerClient client = new IndexerClient("127.0.0.1:" + server.port(), Duration.ofMillis(250))) {
            client.keepWarm();
            assertThat(client.findMatches("m", 16, new long[]{1, 2, 3})).contains(Map.of("worker-0", KvOverlap.deviceOnly(3)));

            fake.delayMs.set(1000); // slowed past the deadline: no answer, never an exception
            for (int i = 0; i < 6; i++) {
                assertThat(client.findMatches("m", 16, new long[]{1})).isEmpty();
            }
            assertThat(client.errors()).as("timed-out calls until the breaker opened").isBetween(4L, 5L);
            assertThat(client.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
            int before = fake.calls.get();
            assertThat(client.findMatches("m", 16, new long[]{1})).isEmpty();
            assertThat(fake.calls.get()).as("an open breaker does not call the indexer").isEqualTo(before);
        }
    }

    @Test
    void aLongPromptWaitsItsStakeAndAnAnswerPastTheDeadlineButInItsBudgetNeitherMissesNorOpensTheBreaker() {
        FakeIndexer fake = new FakeIndexer();
        DeadlineEstimator deadline = new DeadlineEstimator(DeadlineEstimator.Settings.fixed(Duration.ofMillis(100)),
                new DeadlineEstimator.Stake(0.5, Duration.ofSeconds(3)));
        try (GrpcEndpoint server = new GrpcEndpoint("fake-indexer", "127.0.0.1", 0, List.of(fake)).start();
             IndexerClient client = new IndexerClient("127.0.0.1:" + server.port(), deadline,
                     new io.micrometer.core.instrument.simple.SimpleMeterRegistry())) {
            client.keepWarm();
            fake.delayMs.set(300);
            long fourSecondsOfPrefill = Duration.ofSeconds(4).toNanos(); // half of it: a 2 s budget
            for (int i = 0; i < 8; i++) {
                java.util.concurrent.CompletableFuture<java.util.Optional<Map<String, KvOverlap>>> answer =
                        new java.util.concurrent.CompletableFuture<>();
                client.findMatches("m", 16, new long[]{1, 2, 3}, fourSecondsOfPrefill, answer::complete);
                assertThat(answer.join()).as("answered after 300 ms, within its stake")
                        .contains(Map.of("worker-0", KvOverlap.deviceOnly(3)));
            }
            assertThat(client.errors()).isZero();
            assertThat(client.breakerState()).as("late for the deadline, in time for the budget: not a failure")
                    .isEqualTo(CircuitBreaker.State.CLOSED);

            assertThat(client.findMatches("m", 16, new long[]{1})).as("a short prompt has the deadline").isEmpty();
            assertThat(client.missedDeadlines()).isEqualTo(1);
        }
    }

    @Test
    void aDeadIndexerIsNoAnswer() {
        try (IndexerClient client = new IndexerClient("127.0.0.1:1", Duration.ofMillis(50))) {
            assertThat(client.findMatches("m", 16, new long[]{1})).isEmpty();
            client.keepWarm(); // must not throw either
        }
    }

    @Test
    void theAsynchronousCallAnswersOnTheChannelsThreadAndAnOpenBreakerAnswersAtOnceOnTheCallersThread() throws Exception {
        FakeIndexer fake = new FakeIndexer();
        try (GrpcEndpoint server = new GrpcEndpoint("fake-indexer", "127.0.0.1", 0, List.of(fake)).start();
             IndexerClient client = new IndexerClient("127.0.0.1:" + server.port(), Duration.ofMillis(250))) {
            client.keepWarm();
            java.util.concurrent.CompletableFuture<String> answeredOn = new java.util.concurrent.CompletableFuture<>();
            java.util.concurrent.atomic.AtomicReference<java.util.Optional<Map<String, KvOverlap>>> answer =
                    new java.util.concurrent.atomic.AtomicReference<>();
            client.findMatches("m", 16, new long[]{1, 2, 3}, m -> {
                answer.set(m);
                answeredOn.complete(Thread.currentThread().getName());
            });
            assertThat(answeredOn.get(10, java.util.concurrent.TimeUnit.SECONDS)).isNotEqualTo(Thread.currentThread().getName());
            assertThat(answer.get()).contains(Map.of("worker-0", KvOverlap.deviceOnly(3)));

            fake.delayMs.set(1000);
            while (client.breakerState() != CircuitBreaker.State.OPEN) {
                client.findMatches("m", 16, new long[]{1});
            }
            List<String> threads = new java.util.ArrayList<>();
            client.findMatches("m", 16, new long[]{1}, m -> {
                assertThat(m).isEmpty();
                threads.add(Thread.currentThread().getName());
            });
            assertThat(threads).as("answered before findMatches returned").containsExactly(Thread.currentThread().getName());
        }
    }
}
