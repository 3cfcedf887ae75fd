package io.flotilla.router.bench;

import io.flotilla.protocol.Ports;
import io.flotilla.protocol.kafka.ProtoProducers;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.CapacityUpdate;
import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WatchCapacityRequest;
import io.flotilla.protocol.v1.WorkerCapacity;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Two measurements against running routers (router 0 on 7001/8082 and, for the cross-replica
 * cases, router 1 on 7011/8091: {@code bin/flotilla up -d --routers 2}). Both run on workers of their
 * own: the harness registers fake workers of a model nobody else serves on {@code flotilla.workers}
 * (they never report load, so only bookings move their load) and stops them at the end.
 *
 * <ul>
 *   <li>{@code push N}: one worker; N times, book it full (Route) until a watcher sees the model
 *   saturated, then time from sending the Release to the watcher's first update that is not
 *   saturated. Watching router 0: the Release sent to router 0 (same replica) and to router 1
 *   (crossing router-sync).</li>
 *   <li>{@code drift SECONDS RATE}: four workers; RATE requests a second, each booked on a random
 *   replica and released there after 0.5–2 s. Four times a second both replicas' booked blocks per
 *   worker are read at once ({@code /actuator/router}); prints the difference, and each replica's
 *   router-sync apply lag.</li>
 * </ul>
 *
 * <p>With {@code -Dreplica.own=true} it needs no cluster (and no cluster lock): it starts its own Kafka
 * broker and two router processes ({@code router-service-exec.jar}) on free ports, and stops them;
 * {@code -Dreplica.router-args="--flotilla.router.capacity.coalesce=0ms"} passes settings to both.
 *
 * <pre>
 * bin/flotilla up -d --routers 2
 * ./mvnw -q -pl router-service -am test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt -Dmdep.includeScope=test
 * java -cp router-service/target/test-classes:router-service/target/classes:$(cat /tmp/cp.txt) \
 *     io.flotilla.router.bench.ReplicaBenchmark push 1000     # or: drift 60 50
 * </pre>
 */
public final class ReplicaBenchmark {

    private static final int CAPACITY_BLOCKS = 1000;
    private static final int BS = 16;

    /** Where the replicas are: the local cluster's ports, or the ones {@link OwnRouters} picked. */
    private static String kafkaAddress = "127.0.0.1:" + Ports.KAFKA;
    private static int[] grpcPorts = {Ports.routerGrpc(0), Ports.routerGrpc(1)};
    private static int[] managementPorts = {Ports.routerManagement(0), Ports.routerManagement(1)};

    public static void main(String[] args) throws Exception {
        if (Boolean.getBoolean("replica.own")) {
            try (OwnRouters own = new OwnRouters(System.getProperty("replica.router-args", ""))) {
                kafkaAddress = own.kafkaAddress();
                grpcPorts = own.grpcPorts();
                managementPorts = own.managementPorts();
                run(args);
            }
        } else {
            run(args);
        }
        System.exit(0);
    }

    private static void run(String[] args) throws Exception {
        String what = args.length > 0 ? args[0] : "push";
        String model = "replica-bench-" + Long.toHexString(System.nanoTime());
        int workers = what.equals("push") ? 1 : 4;
        try (Producer<String, Object> kafka = ProtoProducers.create(ProtoProducers.plaintext(kafkaAddress), "replica-bench", 5000, Map.of())) {
            for (int i = 0; i < workers; i++) {
                kafka.send(new ProducerRecord<>(Topics.WORKERS.name(), model + "-" + i, status(model, i, WorkerState.WORKER_STATE_READY))).get();
            }
            try {
                if (what.equals("push")) {
                    push(model, args.length > 1 ? Integer.parseInt(args[1]) : 1000);
                } else {
                    drift(model, args.length > 1 ? Integer.parseInt(args[1]) : 60, args.length > 2 ? Integer.parseInt(args[2]) : 50);
                }
            } finally {
                for (int i = 0; i < workers; i++) {
                    kafka.send(new ProducerRecord<>(Topics.WORKERS.name(), model + "-" + i, status(model, i, WorkerState.WORKER_STATE_STOPPED))).get();
                }
            }
        }
    }

    private static void push(String model, int cycles) throws Exception {
        Replica a = new Replica(0);
        Replica b = new Replica(1);
        Watcher watch = new Watcher(a, model);
        watch.await(m -> m.getWorkersCount() == 1);
        for (Replica releaseOn : List.of(a, b)) {
            Histogram update = new Histogram(10_000_000_000L, 3);
            Histogram ack = new Histogram(10_000_000_000L, 3);
            for (int i = 0; i < 200 + cycles; i++) { // 200 warm-up cycles
                String id = "push-" + releaseOn.n + "-" + i;
                // The replica may not have applied the previous cycle's Release yet (router-sync lag): retry while busy.
                while (releaseOn.route(model, id, CAPACITY_BLOCKS * BS).getBusy()) {
                    Thread.sleep(1);
                }
                watch.await(ModelCapacity::getSaturated);
                long start = System.nanoTime();
                releaseOn.release(id);
                long acked = System.nanoTime();
                watch.await(m -> !m.getSaturated());
                if (i >= 200) {
                    update.recordValue(System.nanoTime() - start);
                    ack.recordValue(acked - start);
                }
            }
            System.out.printf("push, watching router 0, Release sent to router %d: %d cycles; Release → update not saturated "
                            + "%s; the Release call's own round trip (its Ack) %s%n", releaseOn.n, cycles, text(update), text(ack));
        }
    }

    private static void drift(String model, int seconds, int rate) throws Exception {
        Replica[] replicas = {new Replica(0), new Replica(1)};
        new Watcher(replicas[0], model).await(m -> m.getWorkersCount() == 4);
        new Watcher(replicas[1], model).await(m -> m.getWorkersCount() == 4);
        ScheduledExecutorService load = Executors.newScheduledThreadPool(4);
        SplittableRandom random = new SplittableRandom(7);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        AtomicLong routed = new AtomicLong();
        long interval = 1_000_000_000L / rate;
        load.scheduleAtFixedRate(() -> {
            int n;
            long hold;
            synchronized (random) {
                n = random.nextInt(2);
                hold = 500 + random.nextInt(1500);
            }
            String id = "drift-" + routed.incrementAndGet();
            Replica r = replicas[n];
            r.route(model, id, (1 + (int) (hold % 7)) * 64 * BS);
            load.schedule(() -> r.release(id), hold, TimeUnit.MILLISECONDS);
        }, 0, interval, TimeUnit.NANOSECONDS);
        Histogram diff = new Histogram(1_000_000, 3);
        List<Double> relative = new ArrayList<>();
        while (System.nanoTime() < end) {
            Thread.sleep(250);
            CompletableFuture<Map<String, Long>> onA = CompletableFuture.supplyAsync(() -> replicas[0].bookedBlocks(model));
            CompletableFuture<Map<String, Long>> onB = CompletableFuture.supplyAsync(() -> replicas[1].bookedBlocks(model));
            Map<String, Long> a = onA.join();
            Map<String, Long> b = onB.join();
            long total = 0;
            long off = 0;
            for (String w : a.keySet()) {
                long d = Math.abs(a.get(w) - b.getOrDefault(w, 0L));
                diff.recordValue(d);
                off += d;
                total += a.get(w);
            }
            if (total > 0) {
                relative.add((double) off / total);
            }
        }
        load.shutdownNow();
        relative.sort(null);
        System.out.printf("drift, %d s at %d req/s (%d routed): |booked blocks on router 0 − on router 1| per worker, "
                        + "sampled 4/s: p50 %d, p99 %d, max %d; summed over workers as a share of the booked blocks: "
                        + "p50 %.2f%%, p99 %.2f%%%n", seconds, rate, routed.get(), diff.getValueAtPercentile(50),
                diff.getValueAtPercentile(99), diff.getMaxValue(), 100 * relative.get(relative.size() / 2),
                100 * relative.get((int) (relative.size() * 0.99)));
        for (Replica r : replicas) {
            System.out.printf("router %d sync: %s%n", r.n, r.syncSection());
        }
    }

    private static String text(Histogram h) {
        return String.format("p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms", h.getValueAtPercentile(50) / 1e6,
                h.getValueAtPercentile(90) / 1e6, h.getValueAtPercentile(99) / 1e6, h.getMaxValue() / 1e6);
    }

    private static WorkerStatus status(String model, int i, WorkerState state) {
        return WorkerStatus.newBuilder().setWorkerId(model + "-" + i).setEpoch(1).setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                .setModel(model).setEndpoint("127.0.0.1:1").setBlockSize(BS).setKvLayout("bf16/bs16/paged")
                .setCapacity(WorkerCapacity.newBuilder().setTotalKvBlocks(CAPACITY_BLOCKS * (i == 0 ? 1 : 100)))
                .setState(state).setLeaseMs(3_600_000).setTs(System.currentTimeMillis()).build();
    }

    /** One router replica: its gRPC stub and its status endpoint. */
    private static final class Replica {
        final int n;
        final ManagedChannel channel;
        final RouterServiceGrpc.RouterServiceBlockingStub stub;
        final HttpClient http = HttpClient.newHttpClient();

        Replica(int n) {
            this.n = n;
            this.channel = NettyChannelBuilder.forAddress("127.0.0.1", grpcPorts[n]).usePlaintext().build();
            this.stub = RouterServiceGrpc.newBlockingStub(channel);
        }

        io.flotilla.protocol.v1.RouteDecision route(String model, String id, int isl) {
            return stub.withDeadlineAfter(5, TimeUnit.SECONDS)
                    .route(RouteRequest.newBuilder().setRequestId(id).setModel(model).setIsl(isl).setBlockSize(BS).build());
        }

        void release(String id) {
            stub.withDeadlineAfter(5, TimeUnit.SECONDS).release(RequestRef.newBuilder().setRequestId(id).build());
        }

        String status() {
            try {
                return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPorts[n]
                        + "/actuator/router")).build(), HttpResponse.BodyHandlers.ofString()).body();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        /** Booked blocks per worker of {@code model}, from {@code /actuator/router}. */
        Map<String, Long> bookedBlocks(String model) {
            Map<String, Long> out = new java.util.TreeMap<>();
            Matcher m = Pattern.compile("\"id\":\"(" + Pattern.quote(model) + "-\\d+)\"[^}]*?\"booked_blocks\":(\\d+)")
                    .matcher(status());
            while (m.find()) {
                out.put(m.group(1), Long.parseLong(m.group(2)));
            }
            return out;
        }

        String syncSection() {
            Matcher m = Pattern.compile("\"sync\":(\\{[^}]*})").matcher(status());
            return m.find() ? m.group(1) : "?";
        }
    }

    /** A WatchCapacity stream for one model; {@link #await} blocks until an update satisfies a condition. */
    private static final class Watcher {
        final LinkedBlockingQueue<ModelCapacity> updates = new LinkedBlockingQueue<>();

        Watcher(Replica r, String model) {
            RouterServiceGrpc.newStub(r.channel).watchCapacity(WatchCapacityRequest.newBuilder().setGatewayId("replica-bench")
                    .addModels(model).build(), new StreamObserver<>() {
                @Override
                public void onNext(CapacityUpdate u) {
                    u.getModelsList().forEach(updates::add);
                }

                @Override
                public void onError(Throwable t) {
                    System.err.println("watch ended: " + t);
                }

                @Override
                public void onCompleted() {
                }
            });
        }

        void await(java.util.function.Predicate<ModelCapacity> condition) throws InterruptedException {
            while (true) {
                ModelCapacity m = updates.poll(10, TimeUnit.SECONDS);
                if (m == null) {
                    throw new IllegalStateException("no capacity update for 10 s");
                }
                if (condition.test(m)) {
                    return;
                }
            }
        }
    }
}
