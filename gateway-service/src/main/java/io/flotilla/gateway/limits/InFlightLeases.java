package io.flotilla.gateway.limits;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * Per-flow in-flight places in Redis: the sorted-set semaphore of the Redis documentation, one set per
 * flow ({@code <prefix>inflight:<flow>}) whose members are lease ids scored by their expiry on the
 * server's clock ({@code TIME}), so gateway clocks never matter. Each operation is one script, atomic
 * on the server:
 * <ul>
 *   <li>acquire: drop expired leases, then add this one if fewer than the limit remain; when full,
 *       mark the flow as having waiters ({@code <set>:waiting}, a short TTL)</li>
 *   <li>release: remove the lease; when the flow has waiters anywhere, publish the flow on
 *       {@code <prefix>inflight-released} so every gateway dispatches its waiters at once</li>
 *   <li>renew: push the expiry of this gateway's leases of a flow forward (re-adding any that expired
 *       while still in flight: they are)</li>
 * </ul>
 * A gateway that dies stops renewing, and its places free themselves after the lease TTL. Bucket4j
 * counts tokens, not places, and Redisson's expirable semaphore would bring a second Redis client,
 * hence these three short scripts on the Lettuce connection the rate limit already uses.
 */
final class InFlightLeases {

    static final String LIMIT = "in_flight";

    private static final String ACQUIRE = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local ttl = tonumber(ARGV[3])
            redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
            local n = redis.call('ZCARD', KEYS[1])
            if n < tonumber(ARGV[2]) then
              redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
              redis.call('PEXPIRE', KEYS[1], ttl)
              return 1
            end
            redis.call('SET', KEYS[2], '1', 'PX', tonumber(ARGV[4]))
            return 0
            """;
    private static final String RELEASE = """
            local removed = redis.call('ZREM', KEYS[1], ARGV[1])
            if removed == 1 and redis.call('EXISTS', KEYS[2]) == 1 then
              redis.call('PUBLISH', ARGV[2], ARGV[3])
            end
            return removed
            """;
    private static final String RENEW = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local ttl = tonumber(ARGV[1])
            for i = 2, #ARGV do
              redis.call('ZADD', KEYS[1], now + ttl, ARGV[i])
            end
            redis.call('PEXPIRE', KEYS[1], ttl)
            return #ARGV - 1
            """;

    private final LimitStore store;
    private final String prefix;
    private final String channel;
    private final long ttlMillis;
    private final long waitingMillis;

    /**
     * @param ttlMillis     lease lifetime without renewal
     * @param waitingMillis how long a "waiters" mark lasts (the recheck interval, twice)
     */
    InFlightLeases(LimitStore store, String keyPrefix, long ttlMillis, long waitingMillis) {
        this.store = store;
        this.prefix = keyPrefix + "inflight:";
        this.channel = keyPrefix + "inflight-released";
        this.ttlMillis = ttlMillis;
        this.waitingMillis = waitingMillis;
    }

    /** {@code onReleased} gets each flow some gateway released a place of while it had waiters. */
    void onReleased(Consumer<String> onReleased) {
        store.subscribe(channel, onReleased);
    }

    /** True when {@code lease} took one of the flow's {@code limit} places, false when they are all taken. */
    CompletableFuture<Boolean> acquire(String flow, String lease, int limit) {
        String key = prefix + flow;
        return store.call(LIMIT, c -> script(c, ACQUIRE, new String[]{key, key + ":waiting"},
                lease, Integer.toString(limit), Long.toString(ttlMillis), Long.toString(waitingMillis)))
                .thenApply(r -> r == 1L);
    }

    CompletableFuture<Long> release(String flow, String lease) {
        String key = prefix + flow;
        return store.call(LIMIT, c -> script(c, RELEASE, new String[]{key, key + ":waiting"}, lease, channel, flow));
    }

    CompletableFuture<Long> renew(String flow, Collection<String> leases) {
        String[] args = new String[leases.size() + 1];
        args[0] = Long.toString(ttlMillis);
        int i = 1;
        for (String l : leases) {
            args[i++] = l;
        }
        return store.call(LIMIT, c -> script(c, RENEW, new String[]{prefix + flow}, args));
    }

    /** EVALSHA, and EVAL once when the server does not know the script yet (first use, or after a restart). */
    private static CompletionStage<Long> script(StatefulRedisConnection<String, byte[]> c, String script, String[] keys,
                                                String... args) {
        byte[][] values = new byte[args.length][];
        for (int i = 0; i < args.length; i++) {
            values[i] = args[i].getBytes(StandardCharsets.UTF_8);
        }
        String sha = sha1(script);
        CompletionStage<Long> first = c.async().<Long>evalsha(sha, ScriptOutputType.INTEGER, keys, values);
        return first.exceptionallyCompose(e -> LimitStore.unwrap(e) instanceof RedisNoScriptException
                ? c.async().<Long>eval(script, ScriptOutputType.INTEGER, keys, values)
                : CompletableFuture.failedFuture(LimitStore.unwrap(e)));
    }

    private static final java.util.Map<String, String> SHAS = new java.util.concurrent.ConcurrentHashMap<>();

    private static String sha1(String script) {
        return SHAS.computeIfAbsent(script, s -> {
            try {
                return HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-1")
                        .digest(s.getBytes(StandardCharsets.UTF_8)));
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** For tests: the places the store counts for {@code flow} now (expired leases included until the next acquire). */
    CompletableFuture<Long> count(String flow) {
        return store.call(LIMIT, c -> c.async().zcard(prefix + flow));
    }
}
