package io.flotilla.gateway.responses;

import io.flotilla.cluster.redis.RedisServer;
import io.flotilla.cluster.redis.RedisServerExtension;
import io.flotilla.gateway.limits.LimitMetrics;
import io.flotilla.gateway.limits.LimitStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.json.JsonMapper;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Both stores of {@code /v1/responses}: the in-memory one on a clock the test moves (time to live, size bound,
 * owners), and the Redis one as two gateway replicas see it through two connections to one real Redis (what one
 * stores the other reads, owners apart, each key with its time to live, a record over the size limit refused).
 */
@ExtendWith(RedisServerExtension.class)
class ResponseStoresTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final List<LimitStore> stores = new ArrayList<>();

    private static final class MovableClock extends Clock {
        Instant now = Instant.parse("2026-01-01T00:00:00Z");

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @AfterEach
    void close() {
        stores.forEach(LimitStore::close);
    }

    private static StoredResponse response(String id, String owner) {
        return new StoredResponse(id, owner, "worker-a", "{\"id\":\"" + id + "\"}", "[]");
    }

    @Test
    void memoryStoreKeepsForItsTtlAndDropsTheOldestBeyondItsSize() {
        MovableClock clock = new MovableClock();
        MemoryResponseStore store = new MemoryResponseStore(2, Duration.ofMinutes(10), clock);
        store.put(response("resp_1", "a")).block();
        assertThat(store.get("a", "resp_1").block()).isEqualTo(response("resp_1", "a"));
        assertThat(store.get("b", "resp_1").block()).as("another owner").isNull();
        assertThat(store.delete("b", "resp_1").block()).isFalse();

        clock.now = clock.now.plus(Duration.ofMinutes(9));
        store.put(response("resp_2", "a")).block();
        store.put(response("resp_3", "a")).block();
        assertThat(store.get("a", "resp_1").block()).as("the oldest, past the size bound").isNull();
        assertThat(store.size()).isEqualTo(2);

        clock.now = clock.now.plus(Duration.ofMinutes(10));
        assertThat(store.get("a", "resp_2").block()).as("expired").isNull();
        store.put(response("resp_4", "a")).block();
        assertThat(store.size()).as("the expired dropped on the next put").isEqualTo(1);
        assertThat(store.delete("a", "resp_4").block()).isTrue();
        assertThat(store.get("a", "resp_4").block()).isNull();
    }

    private RedisResponseStore replica(RedisServer redis, String prefix, long maxBytes) {
        LimitStore store = new LimitStore(redis.uri(), Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(2),
                new LimitMetrics(new SimpleMeterRegistry()));
        stores.add(store);
        await().atMost(Duration.ofSeconds(20)).until(store::up);
        return new RedisResponseStore(store, JSON, prefix, Duration.ofMinutes(5), maxBytes);
    }

    @Test
    void redisStoreIsSharedByReplicasAndKeepsOwnersApart(RedisServer redis) {
        String prefix = "test-" + UUID.randomUUID() + ":";
        RedisResponseStore a = replica(redis, prefix, 1 << 20);
        RedisResponseStore b = replica(redis, prefix, 1 << 20);
        a.put(response("resp_x", "owner-1")).block();
        assertThat(b.get("owner-1", "resp_x").block()).isEqualTo(response("resp_x", "owner-1"));
        assertThat(b.get("owner-2", "resp_x").block()).isNull();
        assertThat(b.delete("owner-2", "resp_x").block()).isFalse();
        assertThat(a.get("owner-1", "resp_x").block()).isNotNull();

        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            long ttl = c.sync().pttl(prefix + "resp:resp_x");
            assertThat(ttl).isPositive().isLessThanOrEqualTo(Duration.ofMinutes(5).toMillis());
        } finally {
            client.shutdown();
        }

        assertThat(b.delete("owner-1", "resp_x").block()).isTrue();
        assertThat(a.get("owner-1", "resp_x").block()).isNull();
        assertThat(a.get("owner-1", "resp_never").block()).isNull();
    }

    @Test
    void redisStoreRefusesARecordOverItsSizeLimit(RedisServer redis) {
        RedisResponseStore small = replica(redis, "test-" + UUID.randomUUID() + ":", 64);
        StoredResponse big = new StoredResponse("resp_big", "o", "w", "{\"text\":\"" + "x".repeat(100) + "\"}", "[]");
        assertThatThrownBy(() -> small.put(big).block()).hasMessageContaining("over the store's limit of 64");
        assertThat(small.get("o", "resp_big").block()).isNull();
    }
}
