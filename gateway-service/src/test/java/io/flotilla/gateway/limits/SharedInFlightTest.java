package io.flotilla.gateway.limits;

import io.flotilla.cluster.redis.RedisServer;
import io.flotilla.cluster.redis.RedisServerExtension;
import io.flotilla.gateway.flow.TenantGate;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The per-flow in-flight limit of two gateways sharing one real Redis: places are counted across both,
 * a release on one wakes the other's waiters through pub/sub, a gateway that dies frees its places after
 * the lease TTL, and without the store each gateway counts alone (counted as fallbacks).
 */
@ExtendWith(RedisServerExtension.class)
class SharedInFlightTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final LimitMetrics metrics = new LimitMetrics(registry);
    private final String prefix = "test-" + UUID.randomUUID() + ":";
    private final Scheduler scheduler = Schedulers.newSingle("in-flight-test");
    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
        scheduler.dispose();
    }

    private record Gateway(TenantInFlight gate, LimitStore store, ConcurrentLinkedQueue<String> told) {
        TenantGate.Lease acquire(String flow) throws Exception {
            return gate.acquire(flow).toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /** A gateway whose flow "team-a" may hold 3 places. */
    private Gateway gateway(String uri, Duration leaseTtl) {
        LimitStore store = uri == null ? null : new LimitStore(uri, Duration.ofSeconds(2), Duration.ofSeconds(1),
                Duration.ofSeconds(2), metrics);
        TenantInFlight gate = new TenantInFlight(f -> f.equals("team-a") ? 3 : 0, store, prefix, leaseTtl,
                Duration.ofSeconds(30), "gw-" + closing.size(), scheduler, metrics);
        ConcurrentLinkedQueue<String> told = new ConcurrentLinkedQueue<>();
        gate.onMayTry(told::add);
        closing.add(gate);
        if (store != null) {
            closing.add(store);
            await().atMost(Duration.ofSeconds(20)).until(store::up);
        }
        return new Gateway(gate, store, told);
    }

    @Test
    void placesAreCountedAcrossGatewaysAndAReleaseOnOneWakesTheOther(RedisServer redis) throws Exception {
        Gateway a = gateway(redis.uri(), Duration.ofSeconds(30));
        Gateway b = gateway(redis.uri(), Duration.ofSeconds(30));
        TenantGate.Lease a1 = a.acquire("team-a");
        TenantGate.Lease a2 = a.acquire("team-a");
        TenantGate.Lease b1 = b.acquire("team-a");
        assertThat(List.of(a1, a2, b1)).doesNotContainNull();
        assertThat(b.acquire("team-a")).isNull(); // 3 held across both
        assertThat(b.gate().mayTry("team-a")).isFalse();
        assertThat(a.acquire("team-a")).isNull();

        a1.release(); // b has a waiter: the store tells every gateway
        await().atMost(Duration.ofSeconds(10)).until(() -> b.told().contains("team-a"));
        assertThat(b.gate().mayTry("team-a")).isTrue();
        TenantGate.Lease b2 = b.acquire("team-a");
        assertThat(b2).isNotNull();
        assertThat(b.gate().held("team-a")).isEqualTo(2);
        assertThat(metrics.fallbacks(InFlightLeases.LIMIT)).isZero();
        a2.release();
        b1.release();
        b2.release();
        assertThat(b.gate().held("team-a")).isZero();
    }

    @Test
    void aGatewayThatDiesFreesItsPlacesAfterTheLeaseTtl(RedisServer redis) throws Exception {
        Gateway dying = gateway(redis.uri(), Duration.ofMillis(600));
        Gateway alive = gateway(redis.uri(), Duration.ofMillis(600));
        for (int i = 0; i < 3; i++) {
            assertThat(dying.acquire("team-a")).isNotNull();
        }
        dying.gate().close(); // stops renewing, as a killed process would
        dying.store().close();
        assertThat(alive.acquire("team-a")).isNull();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> alive.acquire("team-a") != null);
    }

    @Test
    void leasesHeldLongerThanTheirTtlAreRenewed(RedisServer redis) throws Exception {
        Gateway a = gateway(redis.uri(), Duration.ofMillis(1500));
        Gateway b = gateway(redis.uri(), Duration.ofMillis(1500));
        for (int i = 0; i < 3; i++) {
            assertThat(a.acquire("team-a")).isNotNull();
        }
        Thread.sleep(4000); // over two and a half TTLs: renewed every 500 ms (a third of a TTL of slack for a busy machine)
        assertThat(b.acquire("team-a")).isNull();
    }

    @Test
    void withoutTheStoreEachGatewayCountsAloneAndSaysSo() throws Exception {
        int closedPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        LimitStore down = new LimitStore("redis://127.0.0.1:" + closedPort, Duration.ofSeconds(1), Duration.ofMillis(200),
                Duration.ofSeconds(2), metrics);
        closing.add(down);
        TenantInFlight gate = new TenantInFlight(f -> 3, down, prefix, Duration.ofSeconds(30), Duration.ofSeconds(1), "gw",
                scheduler, metrics);
        closing.add(gate);
        List<TenantGate.Lease> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(gate.acquire("team-b").toCompletableFuture().get(1, TimeUnit.SECONDS));
        }
        assertThat(held).doesNotContainNull();
        assertThat(gate.acquire("team-b").toCompletableFuture().get(1, TimeUnit.SECONDS)).isNull();
        assertThat(gate.mayTry("team-b")).isFalse();
        assertThat(metrics.fallbacks(InFlightLeases.LIMIT)).isEqualTo(4);
        held.get(0).release();
        assertThat(gate.mayTry("team-b")).isTrue();
    }
}
