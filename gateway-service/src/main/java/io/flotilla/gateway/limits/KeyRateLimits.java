package io.flotilla.gateway.limits;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The per-key rate limit: a token bucket of {@code perPeriod} tokens per key, refilled by
 * {@code perPeriod} every {@code period} (Bucket4j, interval refill: Resilience4j's limiter
 * "N per period"); one token per request, never waiting.
 *
 * <p>With a {@link LimitStore} the bucket of a key lives in Redis (Bucket4j's compare-and-swap
 * buckets through Lettuce), so every gateway replica draws from the same tokens; a key's entry expires
 * once its bucket would be full again. Requests of one key that arrive while this gateway's previous
 * compare-and-swap of it is in flight are batched into the next one (Bucket4j's batching
 * optimization). Without it every request is its own read and swap: concurrent ones fail and retry,
 * one swap per round of them succeeds, and a round of hundreds of contenders on a loaded machine takes
 * long enough that a hot key at 105/s queued without bound (TenancyE2ETest: decisions up to 11 s late,
 * and fewer admitted than the limit, the refills of a bucket nobody managed to draw capped at its
 * capacity). With it, one round trip decides everything that queued meanwhile, and only the replicas
 * contend. A decision from the store is handed to Reactor's parallel scheduler: the rest of the request
 * (the filter chain, routing, the error body of a refusal) must not run on the Lettuce event loop that
 * reads every gateway's next answer from Redis. When the store cannot be used — not connected, skipped by the
 * breaker, a failed or timed-out call — the same call decides with this gateway's own bucket of the key
 * instead (so each replica admits up to the limit on its own while the store is away) and counts the
 * fallback. The local bucket is also drawn by every request the shared bucket admits, so it always
 * holds what this gateway has not admitted lately: a store that answers some calls and times out on
 * others (a stalled machine, a flapping link) lets the replicas admit at most the limit each, never the
 * shared tokens plus a fresh local bucket's on top. Bucket state is time-based on the gateways' clocks ({@code clock}), so the replicas'
 * clocks should agree (NTP) to well under a period.
 *
 * <p>Keys are API key ids (bounded by the configured keys) or {@code anonymous}: one local bucket and
 * one remote handle per key, kept while the limit stays the same.
 *
 * <p>The limit may change at run time ({@link #reconfigure}, from the runtime ConfigMap): every key starts a fresh
 * bucket of the new size. The shared buckets' Redis keys name the limit ({@code rate:<n>/<period ms>:<key>}), so
 * replicas that have applied the same limit draw from the same buckets, and those of an old limit expire on
 * their own.
 */
public final class KeyRateLimits {

    /**
     * A request's answer: allowed, or refused with how long until a token is back; and the bucket after it, as the
     * rate-limit response headers report it.
     *
     * @param remaining requests the key may still make now
     * @param reset     time until the bucket is full again (zero when it is)
     */
    public record Decision(boolean allowed, Duration retryAfter, long remaining, Duration reset) {
    }

    static final String LIMIT = "rate";

    /** One limit and the buckets drawn under it; replaced whole by {@link #reconfigure}. */
    private record Limit(int perPeriod, Duration period, BucketConfiguration configuration, String keyPrefix,
                         Map<String, Bucket> local, Map<String, AsyncBucketProxy> shared) {

        static Limit of(int perPeriod, Duration period, String prefix) {
            if (perPeriod < 1 || period.isNegative() || period.isZero() || period.toNanos() < perPeriod) {
                throw new IllegalArgumentException("a rate limit needs a positive count and period (at most one request "
                        + "per nanosecond), was " + perPeriod + " per " + period);
            }
            return new Limit(perPeriod, period, BucketConfiguration.builder()
                    .addLimit(Bandwidth.builder().capacity(perPeriod).refillIntervally(perPeriod, period).build())
                    .build(), prefix + perPeriod + "/" + period.toMillis() + ":", new ConcurrentHashMap<>(),
                    new ConcurrentHashMap<>());
        }
    }

    private final TimeMeter clock;
    private final LimitStore store;
    private final LimitMetrics metrics;
    private final String keyPrefix;
    private volatile Limit limit;
    private volatile AsyncProxyManager<String> proxies;

    /**
     * @param store     the shared store, or null to count in this process only
     * @param keyPrefix prefix of the buckets' Redis keys
     * @param clock     time of the buckets (nanoseconds; wall-clock based when shared)
     */
    public KeyRateLimits(int perPeriod, Duration period, LimitStore store, String keyPrefix, TimeMeter clock,
                         LimitMetrics metrics) {
        this.clock = clock;
        this.store = store;
        this.metrics = metrics;
        this.keyPrefix = keyPrefix + "rate:";
        this.limit = Limit.of(perPeriod, period, this.keyPrefix);
        if (store != null) {
            store.onConnect(connection -> {
                proxies = Bucket4jLettuce.casBasedBuilder(connection)
                        .clientClock(clock)
                        .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(period))
                        .build().asAsync();
                limit.shared().clear();
            });
        }
    }

    public int perPeriod() {
        return limit.perPeriod();
    }

    public Duration period() {
        return limit.period();
    }

    /**
     * Counts {@code perPeriod} requests per {@code period} from now on, each key from a full bucket; the same limit
     * again changes nothing.
     *
     * @throws IllegalArgumentException for a limit a token bucket cannot count
     */
    public void reconfigure(int perPeriod, Duration period) {
        Limit current = limit;
        if (current.perPeriod() == perPeriod && current.period().equals(period)) {
            return;
        }
        limit = Limit.of(perPeriod, period, keyPrefix);
    }

    /** Takes one token of {@code key}'s bucket, shared when the store may be used, else this gateway's. */
    public Mono<Decision> tryAcquire(String key) {
        Limit l = limit;
        AsyncProxyManager<String> p = proxies;
        if (store == null || p == null) {
            if (store != null) {
                metrics.fallback(LIMIT, new LimitStore.StoreUnavailable("never connected"));
            }
            return Mono.just(local(l, key));
        }
        CompletableFuture<ConsumptionProbe> probe = store.call(LIMIT, c -> l.shared()
                .computeIfAbsent(key, k -> p.builder().withOptimization(Optimizations.batching()).build(l.keyPrefix() + k,
                        l.configuration()))
                .tryConsumeAndReturnRemaining(1));
        Mono<ConsumptionProbe> answer = Mono.fromFuture(probe, true);
        if (!probe.isDone()) {
            answer = answer.publishOn(Schedulers.parallel()); // off Lettuce's event loop: what follows is the request's own work
        }
        return answer
                .map(p2 -> {
                    Decision d = decision(p2);
                    if (d.allowed()) {
                        localBucket(l, key).tryConsume(1); // keeps this gateway's own count of what it admitted
                    }
                    return d;
                })
                .onErrorResume(e -> {
                    metrics.fallback(LIMIT, e);
                    return Mono.just(local(l, key));
                });
    }

    private Decision local(Limit l, String key) {
        return decision(localBucket(l, key).tryConsumeAndReturnRemaining(1));
    }

    private Bucket localBucket(Limit l, String key) {
        return l.local().computeIfAbsent(key, k -> Bucket.builder().addLimit(l.configuration().getBandwidths()[0])
                .withCustomTimePrecision(clock).build());
    }

    private static Decision decision(ConsumptionProbe probe) {
        return new Decision(probe.isConsumed(), probe.isConsumed() ? Duration.ZERO : Duration.ofNanos(probe.getNanosToWaitForRefill()),
                probe.getRemainingTokens(), Duration.ofNanos(Math.max(0, probe.getNanosToWaitForReset())));
    }
}
