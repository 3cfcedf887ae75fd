package io.flotilla.router.it;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.router.RouterApplication;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A fleet of 256 simulated workers on a real broker, as {@code bin/flotilla up --fleet} runs them: 192 in this
 * JVM and 64 in a worker JVM of their own, every one on a gRPC port it bound and advertised. The router sees all
 * 256, routes requests that the chosen workers serve over gRPC; the worker JVM is SIGKILLed (no STOPPED is ever
 * published), its 64 workers leave routing when their leases lapse, and the router keeps routing to the rest.
 */
@ExtendWith(KafkaBrokerExtension.class)
class FleetRoutingKafkaTest {

    private static final int IN_PROCESS = 192;
    private static final int IN_CHILD = 64;

    @Test
    void routesToAFleetOf256LosesAWorkerJvmAndKeepsServing(KafkaBroker kafka, @TempDir Path dir) throws Exception {
        String prefix = "fl" + System.nanoTime();
        String here = prefix + "a";
        String there = prefix + "b";
        int routerPort = KafkaBroker.freePort();
        Process child = new ProcessBuilder(workerJvm(kafka, there)).redirectErrorStream(true)
                .redirectOutput(dir.resolve("fleet-b.log").toFile()).start();
        ConfigurableApplicationContext workers = null;
        ConfigurableApplicationContext router = null;
        Map<String, ManagedChannel> channels = new HashMap<>();
        ManagedChannel routerChannel = NettyChannelBuilder.forAddress("127.0.0.1", routerPort).usePlaintext().build();
        try {
            workers = new SpringApplicationBuilder(WorkerApplication.class).run(fleetArgs(kafka, here, IN_PROCESS)
                    .toArray(String[]::new));
            router = new SpringApplicationBuilder(RouterApplication.class).run(
                    "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=0",
                    "--flotilla.router.grpc-port=" + routerPort, "--flotilla.router.mode=load",
                    "--flotilla.router.indexer.address=127.0.0.1:" + KafkaBroker.freePort());
            var stub = RouterServiceGrpc.newBlockingStub(routerChannel);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> routable(stub, here) == IN_PROCESS && routable(stub, there) == IN_CHILD);

            Random random = new Random(42);
            List<String> before = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                before.add(routeAndServe(stub, channels, "before-" + i, random).getWorkerId());
            }
            assertThat(before).allMatch(id -> id.startsWith(prefix));

            long killed = System.nanoTime();
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50)).until(() -> routable(stub, there) == 0);
            System.out.printf("fleet: the SIGKILLed JVM's %d workers left routing %d ms after the kill%n", IN_CHILD,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed));
            assertThat(routable(stub, here)).isEqualTo(IN_PROCESS);

            for (int i = 0; i < 32; i++) {
                assertThat(routeAndServe(stub, channels, "after-" + i, random).getWorkerId()).startsWith(here);
            }
        } finally {
            child.destroyForcibly();
            channels.values().forEach(ManagedChannel::shutdownNow);
            routerChannel.shutdownNow();
            if (router != null) {
                router.close();
            }
            if (workers != null) {
                workers.close();
            }
        }
    }

    private static List<String> fleetArgs(KafkaBroker kafka, String id, int instances) {
        return List.of("--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=0",
                "--flotilla.worker.id=" + id, "--flotilla.worker.instances=" + instances, "--flotilla.worker.grpc-port=0",
                "--flotilla.worker.advertised-host=127.0.0.1", "--flotilla.worker.sim.total-blocks=256",
                "--flotilla.worker.sim.kv-bytes-per-block=0", "--flotilla.worker.sim.speedup=100");
    }

    /** A worker JVM of {@link #IN_CHILD} workers on this test's classpath, as the launcher starts a fleet JVM. */
    private static List<String> workerJvm(KafkaBroker kafka, String id) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                WorkerApplication.class.getName()));
        cmd.addAll(fleetArgs(kafka, id, IN_CHILD));
        return cmd;
    }

    private static long routable(RouterServiceGrpc.RouterServiceBlockingStub stub, String prefix) {
        return stub.listWorkers(ListWorkersRequest.getDefaultInstance()).getWorkersList().stream()
                .filter(w -> w.getWorkerId().startsWith(prefix)).filter(WorkerInfo::getRoutable).count();
    }

    /** Routes a 64-token prompt, serves it on the chosen worker over gRPC, releases; the prompt is fresh each time. */
    private static RouteDecision routeAndServe(RouterServiceGrpc.RouterServiceBlockingStub stub,
                                               Map<String, ManagedChannel> channels, String id, Random random) {
        int[] prompt = random.ints(64, 1, 50_000).toArray();
        RouteRequest.Builder r = RouteRequest.newBuilder().setRequestId(id).setModel("flotilla-sim").setIsl(prompt.length)
                .setOsl(4).setBlockSize(16);
        RouteDecision d = stub.withDeadlineAfter(5, TimeUnit.SECONDS).route(r.build());
        ManagedChannel ch = channels.computeIfAbsent(d.getWorkerEndpoint(), e -> NettyChannelBuilder.forTarget(e)
                .usePlaintext().build());
        try {
            GenerateRequest.Builder g = GenerateRequest.newBuilder().setRequestId(id)
                    .setStop(StopConditions.newBuilder().setMaxTokens(4).setIgnoreEos(true));
            java.util.Arrays.stream(prompt).forEach(g::addTokenIds);
            int[] chunks = {0};
            WorkerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS).generate(g.build())
                    .forEachRemaining(c -> chunks[0]++);
            assertThat(chunks[0]).as("chunks from %s", d.getWorkerId()).isPositive();
        } finally {
            stub.release(RequestRef.newBuilder().setRequestId(id).build());
        }
        return d;
    }
}
