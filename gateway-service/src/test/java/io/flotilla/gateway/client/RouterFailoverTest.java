package io.flotilla.gateway.client;

import io.flotilla.gateway.fakes.FakeRouter;
import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Route across two router replicas over real gRPC: failover inside one call, and what each call touched. */
class RouterFailoverTest {

    private final List<GrpcEndpoint> endpoints = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void close() {
        channels.forEach(ManagedChannel::shutdownNow);
        endpoints.forEach(GrpcEndpoint::close);
    }

    private ManagedChannel router(String worker, long delayMs) {
        FakeRouter fake = new FakeRouter(List.of(), r -> {
            if (delayMs > 0) {
                try {
                    Thread.sleep(delayMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return RouteDecision.newBuilder().setWorkerId(worker).setWorkerEndpoint(worker + ":1").build();
        });
        GrpcEndpoint e = new GrpcEndpoint("fake-router-" + worker, "127.0.0.1", 0, List.of(fake)).start();
        endpoints.add(e);
        return channel("127.0.0.1:" + e.port());
    }

    private ManagedChannel channel(String target) {
        ManagedChannel c = NettyChannelBuilder.forTarget(target).usePlaintext().build();
        channels.add(c);
        return c;
    }

    private static ManagedChannel deadRouter() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        return NettyChannelBuilder.forTarget("127.0.0.1:" + port).usePlaintext().build();
    }

    private static RouterClient client(List<ManagedChannel> routers) {
        Duration d = Duration.ofMillis(150);
        return new RouterClient(routers, new RouteDeadline(d, d, 99, 1, Duration.ofSeconds(10), 1, System::nanoTime),
                Duration.ofSeconds(1), (router, outcome, nanos) -> { });
    }

    private static RouteRequest request(int i) {
        return RouteRequest.newBuilder().setRequestId("r" + i).setModel("m").setBlockSize(16).build();
    }

    @Test
    void callsSpreadOverHealthyReplicasAndAnUnreachableOneIsSkippedWithinTheCall() throws Exception {
        ManagedChannel dead = deadRouter();
        channels.add(dead);
        RouterClient client = client(List.of(router("a", 0), dead, router("c", 0)));
        List<String> workers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            RouterAnswer answer = client.route(request(i)).block(Duration.ofSeconds(10));
            workers.add(answer.decision().getWorkerId());
            assertThat(answer.router()).isNotEqualTo(1);
        }
        assertThat(workers).contains("a", "c").doesNotContain("b");
    }

    @Test
    void aReplicaPastTheDeadlineHandsTheCallToTheNextAndBothAreTouched() {
        RouterClient client = client(List.of(router("slow", 600), router("fast", 0)));
        List<RouterAnswer> answers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            answers.add(client.route(request(i)).block(Duration.ofSeconds(10)));
        }
        assertThat(answers).allSatisfy(a -> assertThat(a.decision().getWorkerId()).isEqualTo("fast"));
        assertThat(answers).anySatisfy(a -> assertThat(a.touched()).as("the slow one may have booked").isEqualTo(Set.of(0, 1)));
    }

    @Test
    void noReplicaAnsweringIsRouteFailedNamingEveryReplicaTried() throws Exception {
        ManagedChannel dead1 = deadRouter();
        ManagedChannel dead2 = deadRouter();
        channels.add(dead1);
        channels.add(dead2);
        assertThatThrownBy(() -> client(List.of(dead1, dead2)).route(request(0)).block(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(RouteFailed.class, e -> assertThat(e.touched()).isEqualTo(Set.of(0, 1)));
    }
}
