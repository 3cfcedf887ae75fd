package io.flotilla.router.cluster;

import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.core.WorkerView;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The health watch against real gRPC servers on sockets: what takes a worker out of routing, and what does not. */
class WorkerWatchTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final List<Server> servers = new ArrayList<>();
    private final WorkerDirectory directory = new WorkerDirectory();
    private final WorkerChannels channels = new WorkerChannels();
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final AtomicInteger lostTold = new AtomicInteger();
    private final WorkerWatch watch = new WorkerWatch(directory, channels, lostTold::incrementAndGet, now::get, 8_000);

    @AfterEach
    void close() {
        watch.close();
        channels.close();
        servers.forEach(Server::shutdownNow);
    }

    private record Worker(Server server, HealthStatusManager health) {
        String endpoint() {
            return "127.0.0.1:" + server.getPort();
        }
    }

    private Worker serving() throws IOException {
        return serving(0);
    }

    /** A worker process's gRPC server with the standard health service, SERVING, on {@code port} (0: any). */
    private Worker serving(int port) throws IOException {
        HealthStatusManager health = new HealthStatusManager();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                .addService(health.getHealthService()).build().start();
        servers.add(server);
        return new Worker(server, health);
    }

    private void join(String id, long epoch, String endpoint) {
        directory.onStatus(WorkerStatus.newBuilder().setWorkerId(id).setEpoch(epoch)
                .setState(WorkerState.WORKER_STATE_READY).setTs(now.get()).setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                .setModel("m").setBlockSize(16).setLeaseMs(3000).setEndpoint(endpoint).build(), now.get());
    }

    /** One sync, then until {@code n} watches answered SERVING. */
    private void syncUntilEstablished(int n) {
        watch.sync();
        await().atMost(WAIT).until(() -> watch.established() == n);
    }

    private boolean routable(String id) {
        WorkerView v = directory.view(id);
        return v != null && v.routable();
    }

    @Test
    void aKilledWorkerIsSuspectWhenItsConnectionGoesAndComesBackThroughTheProber() throws Exception {
        Worker w0 = serving();
        Worker w1 = serving();
        join("w0", 1, w0.endpoint());
        join("w1", 1, w1.endpoint());
        syncUntilEstablished(2);

        int port = w0.server().getPort();
        w0.server().shutdownNow(); // the process is gone: its connections close
        await().atMost(WAIT).until(() -> !routable("w0"));
        assertThat(routable("w1")).as("the other worker keeps its routing").isTrue();
        assertThat(directory.size()).as("still in membership: the lease (or the prober) decides the rest").isEqualTo(2);
        assertThat(watch.lost()).isEqualTo(1);
        assertThat(lostTold.get()).isEqualTo(1);
        assertThat(directory.suspectEndpoints()).containsOnlyKeys("w0");

        serving(port); // back on the same endpoint
        SuspectProber prober = new SuspectProber(directory, channels, () -> { });
        await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> {
            prober.probe();
            return routable("w0");
        });
        syncUntilEstablished(2);
    }

    @Test
    void aWorkerThatSaysNotServingIsSuspect() throws Exception {
        Worker w0 = serving();
        join("w0", 1, w0.endpoint());
        syncUntilEstablished(1);
        assertThat(routable("w0")).isTrue();
        w0.health().setStatus("", ServingStatus.NOT_SERVING);
        await().atMost(WAIT).until(() -> !routable("w0"));
        assertThat(watch.lost()).isEqualTo(1);
    }

    @Test
    void aWorkerTheRouterCannotReachStaysRoutableAndIsTriedAgainWithBackoff() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        join("far", 1, "127.0.0.1:" + closedPort);
        watch.sync();
        await().atMost(WAIT).until(() -> watch.unreachable() == 1 && watch.watching() == 0);
        assertThat(routable("far")).as("never watched: its lease decides, not the router's network").isTrue();
        assertThat(watch.lost()).isZero();

        watch.sync();
        assertThat(watch.watching()).as("waits out the first retry (1 s)").isZero();
        now.addAndGet(1_000);
        watch.sync();
        await().atMost(WAIT).until(() -> watch.unreachable() == 2);
        now.addAndGet(1_000);
        watch.sync();
        assertThat(watch.watching()).as("the second wait is 2 s").isZero();
        now.addAndGet(1_000);
        watch.sync();
        await().atMost(WAIT).until(() -> watch.unreachable() == 3);
        assertThat(routable("far")).isTrue();
    }

    @Test
    void aLostConnectionOfAReplacedProcessDoesNotSuspectItsSuccessor() throws Exception {
        Worker old = serving();
        join("w0", 1, old.endpoint());
        syncUntilEstablished(1);
        Worker successor = serving();
        join("w0", 2, successor.endpoint()); // restarted: a new epoch, announced before the old watch breaks
        old.server().shutdownNow();
        await().atMost(WAIT).until(() -> watch.lost() == 1);
        assertThat(routable("w0")).as("the lost connection was the old process's").isTrue();

        syncUntilEstablished(1); // the new process's watch
        successor.server().shutdownNow();
        await().atMost(WAIT).until(() -> !routable("w0"));
    }

    @Test
    void workersThatLeaveAreNoLongerWatchedAndTheirChannelsClose() throws Exception {
        Worker w0 = serving();
        join("w0", 1, w0.endpoint());
        syncUntilEstablished(1);
        directory.onStatus(WorkerStatus.newBuilder().setWorkerId("w0").setEpoch(1)
                .setState(WorkerState.WORKER_STATE_STOPPED).build(), now.get());
        watch.sync();
        assertThat(watch.watching()).isZero();
        assertThat(channels.size()).isZero();
        w0.server().shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        assertThat(watch.lost()).as("a cancelled watch is not a lost worker").isZero();
    }
}
