package io.flotilla.router.it;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.protocol.kafka.ProtoProducers;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.CapacityUpdate;
import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WatchCapacityRequest;
import io.flotilla.protocol.v1.WorkerCapacity;
import io.flotilla.protocol.v1.WorkerHeadroom;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.RouterApplication;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two router replicas on one real broker, called over real gRPC: a booking made on one is counted by
 * the other (router-sync), each counts its own once (echoes ignored), both push it to their
 * WatchCapacity watchers, and a request re-routed on the survivor after the first replica stopped
 * moves instead of counting twice.
 */
@ExtendWith(KafkaBrokerExtension.class)
class TwoRoutersKafkaTest {

    private static final int BLOCKS = 100; // a 1,600-token prompt at block size 16, no output

    @Test
    void replicasShareBookingsAndARerouteOnTheSurvivorMovesTheBooking(KafkaBroker kafka) throws Exception {
        String model = "two-routers-" + System.nanoTime();
        String w0 = model + "-w0";
        String w1 = model + "-w1";
        try (Producer<String, Object> producer = ProtoProducers.create(ProtoProducers.plaintext(kafka.bootstrapServers()), "test-workers", 5000, Map.of())) {
            for (String id : new String[]{w0, w1}) {
                producer.send(new ProducerRecord<>(Topics.WORKERS.name(), id, status(id, model))).get();
            }
        }
        Replica a = Replica.start(kafka, "router-a");
        Replica b = Replica.start(kafka, "router-b");
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> a.workers(model).size() == 2 && b.workers(model).size() == 2);
            // router-sync is read from the end: wait until each replica's feed is attached by seeing a booking cross
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
                String id = "warm-" + System.nanoTime();
                a.route(model, id);
                a.release(id);
                return b.syncApplied() > 0;
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> a.blocksOf(model).values().stream().allMatch(v -> v == 0)
                    && b.blocksOf(model).values().stream().allMatch(v -> v == 0));

            RouteDecision first = a.route(model, "req-1");
            String chosen = first.getWorkerId();
            await().atMost(Duration.ofSeconds(10)).until(() -> b.blocksOf(model).get(chosen) == BLOCKS);
            RouteDecision second = b.route(model, "req-2");
            await().atMost(Duration.ofSeconds(10)).until(() -> a.blocksOf(model).get(second.getWorkerId()) >= BLOCKS);
            // req-2 reached A after A's own echo of req-1 (one partition, in order): the echo changed nothing
            Map<String, Long> onA = a.blocksOf(model);
            Map<String, Long> onB = b.blocksOf(model);
            assertThat(onA).as("both replicas count the same bookings").isEqualTo(onB);
            assertThat(onA.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(2L * BLOCKS);
            assertThat(get(b.management, "/actuator/prometheus")).contains("flotilla_router_sync_apply_lag_seconds_count");

            a.close(); // replica A goes away holding req-1; its gateway re-routes it on B
            RouteDecision moved = b.route(model, "req-1", chosen);
            assertThat(moved.getWorkerId()).isNotEqualTo(chosen);
            await().atMost(Duration.ofSeconds(10)).until(() -> b.blocksOf(model).get(chosen)
                    == (second.getWorkerId().equals(chosen) ? BLOCKS : 0));
            assertThat(b.blocksOf(model).values().stream().mapToLong(Long::longValue).sum())
                    .as("req-1 counted once, on its new worker").isEqualTo(2L * BLOCKS);

            b.release("req-1");
            b.release("req-2");
            await().atMost(Duration.ofSeconds(10)).until(() -> b.blocksOf(model).values().stream().allMatch(v -> v == 0));
        } finally {
            a.close();
            b.close();
        }
    }

    private static WorkerStatus status(String id, String model) {
        return WorkerStatus.newBuilder().setWorkerId(id).setEpoch(1).setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                .setModel(model).setEndpoint("127.0.0.1:1").setBlockSize(16).setKvLayout("bf16/bs16/paged")
                .setCapacity(WorkerCapacity.newBuilder().setTotalKvBlocks(10_000)).setState(WorkerState.WORKER_STATE_READY)
                .setLeaseMs(600_000).setTs(System.currentTimeMillis()).build();
    }

    private static String get(int port, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** One router process (a Spring context), its gRPC channel and its WatchCapacity stream. */
    private static final class Replica implements AutoCloseable {
        final ConfigurableApplicationContext app;
        final int management;
        final ManagedChannel channel;
        final RouterServiceGrpc.RouterServiceBlockingStub stub;
        final AtomicReference<CapacityUpdate> latest = new AtomicReference<>();
        private boolean closed;

        private Replica(ConfigurableApplicationContext app, int grpc, int management) {
            this.app = app;
            this.management = management;
            this.channel = NettyChannelBuilder.forAddress("127.0.0.1", grpc).usePlaintext().build();
            this.stub = RouterServiceGrpc.newBlockingStub(channel);
            RouterServiceGrpc.newStub(channel).watchCapacity(WatchCapacityRequest.newBuilder().setGatewayId("test").build(),
                    new StreamObserver<>() {
                        @Override
                        public void onNext(CapacityUpdate value) {
                            latest.set(value);
                        }

                        @Override
                        public void onError(Throwable t) {
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
        }

        static Replica start(KafkaBroker kafka, String name) {
            int grpc = KafkaBroker.freePort();
            int management = KafkaBroker.freePort();
            ConfigurableApplicationContext app = new SpringApplicationBuilder(RouterApplication.class).run(
                    "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=" + management,
                    "--flotilla.router.name=" + name, "--flotilla.router.grpc-port=" + grpc,
                    // two indexer shards, never asked in load mode: the sharded wiring starts like the single one
                    "--flotilla.router.indexer.addresses=127.0.0.1:1,127.0.0.1:2", "--flotilla.router.mode=load");
            return new Replica(app, grpc, management);
        }

        RouteDecision route(String model, String id, String... exclude) {
            return stub.withDeadlineAfter(5, TimeUnit.SECONDS).route(RouteRequest.newBuilder().setRequestId(id).setModel(model)
                    .setIsl(BLOCKS * 16).setBlockSize(16).addAllExclude(java.util.List.of(exclude)).build());
        }

        void release(String id) {
            stub.withDeadlineAfter(5, TimeUnit.SECONDS).release(RequestRef.newBuilder().setRequestId(id).build());
        }

        /** The workers of {@code model} in the latest pushed update. */
        Map<String, WorkerHeadroom> workers(String model) {
            CapacityUpdate u = latest.get();
            if (u == null) {
                return Map.of();
            }
            return u.getModelsList().stream().filter(m -> m.getModel().equals(model)).findFirst()
                    .map(ModelCapacity::getWorkersList).orElse(java.util.List.of()).stream()
                    .collect(Collectors.toMap(w -> w.getInfo().getWorkerId(), w -> w));
        }

        /** Active blocks per worker of {@code model}, as this replica last pushed them. */
        Map<String, Long> blocksOf(String model) {
            return workers(model).entrySet().stream()
                    .collect(Collectors.toMap(Map.Entry::getKey, e -> (long) e.getValue().getActiveBlocks()));
        }

        long syncApplied() throws Exception {
            String body = get(management, "/actuator/router");
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"applied\":(\\d+)").matcher(body);
            return m.find() ? Long.parseLong(m.group(1)) : 0;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                channel.shutdownNow();
                app.close();
            }
        }
    }
}
