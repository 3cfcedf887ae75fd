package io.flotilla.gateway.limits;

import io.flotilla.cluster.redis.RedisServer;
import io.flotilla.cluster.redis.RedisServerExtension;
import io.github.bucket4j.TimeMeter;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The per-key rate limit of two gateways (two stores, two Lettuce clients) sharing one real Redis, on a
 * clock the test moves: together they admit exactly what one bucket allows, where two local-only
 * gateways admit twice that; a store that is down or goes away is replaced by the local bucket within
 * the call, counted.
 */
@ExtendWith(RedisServerExtension.class)
class SharedRateLimitTest {

    /** Wall-clock-based nanoseconds the test moves (Bucket4j's remote buckets need a wall clock). */
    static final class ManualClock implements TimeMeter {
        volatile long nanos = TimeUnit.MILLISECONDS.toNanos(System.currentTimeMillis());

        @Override
        public long currentTimeNanos() {
            return nanos;
        }

        @Override
        public boolean isWallClockBased() {
            return true;
        }

        void advance(Duration d) {
            nanos += d.toNanos();
        }
    }

    private final ManualClock clock = new ManualClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final LimitMetrics metrics = new LimitMetrics(registry);
    private final String prefix = "test-" + UUID.randomUUID() + ":";
    private final List<LimitStore> stores = new ArrayList<>();

    @AfterEach
    void close() {
        stores.forEach(LimitStore::close);
    }

    private LimitStore store(String uri) {
        LimitStore s = new LimitStore(uri, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(2), metrics);
        stores.add(s);
        return s;
    }

    private KeyRateLimits gateway(LimitStore store) {
        KeyRateLimits limits = new KeyRateLimits(50, Duration.ofSeconds(1), store, prefix, clock, metrics);
        if (store != null) {
            await().atMost(Duration.ofSeconds(20)).until(store::up);
        }
        return limits;
    }

    /** 1,000 requests, 100 per second of the test's clock, alternating between the two gateways. */
    private static int[] thousandRequests(KeyRateLimits a, KeyRateLimits b, ManualClock clock) {
        int[] allowed = new int[2];
        for (int second = 0; second < 10; second++) {
            for (int i = 0; i < 100; i++) {
                KeyRateLimits g = i % 2 == 0 ? a : b;
                if (g.tryAcquire("key-abc").block(Duration.ofSeconds(10)).allowed()) {
                    allowed[i % 2]++;
                }
            }
            clock.advance(Duration.ofSeconds(1));
        }
        return allowed;
    }

    @Test
    void twoGatewaysSharingTheStoreAdmitExactlyOneBucketOver1000Requests(RedisServer redis) {
        KeyRateLimits a = gateway(store(redis.uri()));
        KeyRateLimits b = gateway(store(redis.uri()));
        int[] allowed = thousandRequests(a, b, clock);
        assertThat(allowed[0] + allowed[1]).isEqualTo(500); // 50 per second for 10 seconds
        assertThat(allowed[0]).isPositive();
        assertThat(allowed[1]).isPositive();
        assertThat(metrics.fallbacks(KeyRateLimits.LIMIT)).isZero();
    }

    @Test
    void twoLocalOnlyGatewaysAdmitTwiceTheLimit() {
        int[] allowed = thousandRequests(gateway(null), gateway(null), clock);
        assertThat(allowed[0] + allowed[1]).isEqualTo(1000);
    }

    @Test
    void concurrentRequestsOnBothGatewaysNeverOverdrawTheSharedBucket(RedisServer redis) {
        KeyRateLimits a = gateway(store(redis.uri()));
        KeyRateLimits b = gateway(store(redis.uri()));
        long allowed = Flux.range(0, 400)
                .flatMap(i -> (i % 2 == 0 ? a : b).tryAcquire("key-concurrent"), 64)
                .filter(KeyRateLimits.Decision::allowed).count().block(Duration.ofSeconds(30));
        assertThat(allowed).isEqualTo(50);
    }

    @Test
    void requestsOfOneKeyThatArriveTogetherAreDecidedByOneSwapNotOneEach(RedisServer redis) {
        KeyRateLimits a = gateway(store(redis.uri()));
        assertThat(a.tryAcquire("key-batch").block().allowed()).isTrue(); // the bucket exists
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> admin = client.connect()) {
            admin.sync().configResetstat();
            // Every command waits while Redis is paused: the 200 requests below arrive while the first one's
            // read is in flight, as a hot key's do when a round trip is slow.
            admin.sync().clientPause(300);
            long allowed = Flux.range(0, 200).flatMap(i -> a.tryAcquire("key-batch"), 200)
                    .filter(KeyRateLimits.Decision::allowed).count().block(Duration.ofSeconds(30));
            assertThat(allowed).isEqualTo(49);
            long commands = java.util.Arrays.stream(admin.sync().info("commandstats").split("\r?\n"))
                    .filter(l -> l.startsWith("cmdstat_") && !l.matches("cmdstat_(info|config|client)[:|].*"))
                    .mapToLong(l -> Long.parseLong(l.replaceAll("^[^:]*:calls=(\\d+),.*", "$1"))).sum();
            assertThat(commands).as("reads and swaps of 200 requests (one each without batching: 400 or more)")
                    .isLessThanOrEqualTo(20);
        } finally {
            client.shutdown();
        }
        assertThat(metrics.fallbacks(KeyRateLimits.LIMIT)).isZero();
    }

    @Test
    void aCallThatDoesNotAnswerWithinTheTimeoutFailsThenWhateverItsCommandsAreDoing(RedisServer redis) {
        LimitStore s = new LimitStore(redis.uri(), Duration.ofMillis(200), Duration.ofSeconds(1), Duration.ofSeconds(2),
                metrics);
        stores.add(s);
        await().atMost(Duration.ofSeconds(20)).until(s::up);
        java.util.concurrent.CompletableFuture<Object> never = s.call(KeyRateLimits.LIMIT,
                c -> new java.util.concurrent.CompletableFuture<>()); // a swap that retries forever, say
        assertThat(never).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(java.util.concurrent.TimeoutException.class);
        assertThat(LimitMetrics.reason(new java.util.concurrent.TimeoutException())).isEqualTo("timeout");
    }

    @Test
    void aRefusalSaysWhenTheNextTokenComes(RedisServer redis) {
        KeyRateLimits a = gateway(store(redis.uri()));
        for (int i = 0; i < 50; i++) {
            assertThat(a.tryAcquire("key-retry").block().allowed()).isTrue();
        }
        clock.advance(Duration.ofMillis(300));
        KeyRateLimits.Decision refused = a.tryAcquire("key-retry").block();
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(700));
    }

    @Test
    void aStoreThatNeverAnswersLeavesEveryDecisionToTheLocalBucketWithinTheCallCounted() throws Exception {
        int closedPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        KeyRateLimits a = new KeyRateLimits(50, Duration.ofSeconds(1), store("redis://127.0.0.1:" + closedPort), prefix,
                clock, metrics);
        int allowed = 0;
        for (int i = 0; i < 100; i++) {
            if (a.tryAcquire("key-down").block(Duration.ofSeconds(1)).allowed()) {
                allowed++;
            }
        }
        assertThat(allowed).isEqualTo(50);
        assertThat(metrics.fallbacks(KeyRateLimits.LIMIT)).isEqualTo(100);
        assertThat(stores.get(0).up()).isFalse();
        assertThat(stores.get(0).details()).containsEntry("connection", "never connected");
    }

    @Test
    void aStoreThatGoesAwayIsReplacedByTheLocalBucketAndUsedAgainWhenItIsBack(@TempDir Path dir) {
        RedisServer own = new RedisServer(new RedisServer.Config(dir, 0, true, "16mb", Duration.ofSeconds(20))).start();
        try {
            LimitStore store = store(own.uri());
            KeyRateLimits a = gateway(store);
            assertThat(a.tryAcquire("key-flaky").block().allowed()).isTrue();
            own.close();
            for (int i = 0; i < 20; i++) { // every call answers, from the local bucket
                assertThat(a.tryAcquire("key-flaky").block(Duration.ofSeconds(5))).isNotNull();
            }
            assertThat(metrics.fallbacks(KeyRateLimits.LIMIT)).isEqualTo(20);
            own.start(); // same port: Lettuce reconnects, the breaker lets a call through after its wait
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
                double before = metrics.fallbacks(KeyRateLimits.LIMIT);
                a.tryAcquire("key-flaky").block(Duration.ofSeconds(5));
                return metrics.fallbacks(KeyRateLimits.LIMIT) == before;
            });
            assertThat(store.up()).isTrue();
        } finally {
            own.closeAndDelete();
        }
    }

    @Test
    void whatAGatewayAdmittedThroughTheStoreStillCountsWhenItFallsBackToItsOwnBucket(@TempDir Path dir) {
        RedisServer own = new RedisServer(new RedisServer.Config(dir, 0, true, "16mb", Duration.ofSeconds(20))).start();
        try {
            KeyRateLimits a = gateway(store(own.uri()));
            for (int i = 0; i < 30; i++) {
                assertThat(a.tryAcquire("key-half").block(Duration.ofSeconds(5)).allowed()).isTrue();
            }
            own.close();
            int allowed = 0;
            for (int i = 0; i < 40; i++) {
                if (a.tryAcquire("key-half").block(Duration.ofSeconds(5)).allowed()) {
                    allowed++;
                }
            }
            assertThat(allowed).as("50 per period, 30 of them already admitted through the store").isEqualTo(20);
            assertThat(metrics.fallbacks(KeyRateLimits.LIMIT)).isEqualTo(40);
        } finally {
            own.closeAndDelete();
        }
    }
}
