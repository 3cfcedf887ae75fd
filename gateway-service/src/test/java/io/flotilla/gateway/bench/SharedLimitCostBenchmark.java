package io.flotilla.gateway.bench;

import io.flotilla.cluster.redis.RedisServer;
import io.flotilla.gateway.flow.TenantGate;
import io.flotilla.gateway.limits.KeyRateLimits;
import io.flotilla.gateway.limits.LimitMetrics;
import io.flotilla.gateway.limits.LimitStore;
import io.flotilla.gateway.limits.TenantInFlight;
import io.github.bucket4j.TimeMeter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.HdrHistogram.Histogram;
import reactor.core.scheduler.Schedulers;

import java.nio.file.Files;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * What the shared limits cost one request: the per-key rate limit's decision and the in-flight gate's
 * acquire + release, each timed around the call as the request path makes it, sequentially (the latency
 * a request sees, not throughput), against a real Redis on loopback, against no store (local buckets), and
 * against a store that is down (a closed port: the fallback within the call). Prints p50/p99/p99.9/max in
 * microseconds per case, after {@code warmup} calls of each.
 *
 * <p>Then one hot key under load: two gateways (two stores, two Lettuce connections) on one key limited to
 * 20/s, requests arriving open-loop at {@code hotRate} per second for {@code hotSeconds}, alternating between
 * the gateways, each timed from its arrival to its decision (concurrent requests on one key contend for the
 * same bucket), and what they admitted against the limit's 20 · (1 + seconds): once with the store on
 * loopback, once through a {@link DelayedLink} adding {@code hotDelayMicros} each way (a store in another
 * zone, or a loaded machine: what makes a round trip long enough for contention to matter).
 *
 * <pre>
 * java -cp … io.flotilla.gateway.bench.SharedLimitCostBenchmark 20000 5000 200 10 2000   # samples, warm-up; hot key: req/s, s, µs delay
 * </pre>
 */
public final class SharedLimitCostBenchmark {

    private SharedLimitCostBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int samples = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 5_000;
        int hotRate = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        int hotSeconds = args.length > 3 ? Integer.parseInt(args[3]) : 10;
        long hotDelayMicros = args.length > 4 ? Long.parseLong(args[4]) : 2_000;
        LimitMetrics metrics = new LimitMetrics(new SimpleMeterRegistry());
        RedisServer redis = new RedisServer(RedisServer.Config.forTests(Files.createTempDirectory("limit-cost-"))).start();
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        try (LimitStore shared = store(redis.uri(), metrics); LimitStore down = store("redis://127.0.0.1:" + closed, metrics)) {
            awaitUp(shared);
            System.out.printf("%-28s %8s %8s %8s %8s%n", "case (µs per request)", "p50", "p99", "p99.9", "max");
            for (LimitStore store : new LimitStore[]{shared, null, down}) {
                String name = store == shared ? "redis on loopback" : store == null ? "local only" : "store down (fallback)";
                KeyRateLimits rate = new KeyRateLimits(100_000_000, Duration.ofSeconds(1), store, "bench:",
                        TimeMeter.SYSTEM_MILLISECONDS, metrics);
                print("rate, " + name, time(samples, warmup, i -> rate.tryAcquire("key-" + (i % 64)).block()));
                TenantInFlight gate = new TenantInFlight(f -> 1_000_000, store, "bench:", Duration.ofSeconds(30),
                        Duration.ofMillis(250), "bench", Schedulers.parallel(), metrics);
                print("in-flight, " + name, time(samples, warmup, i -> {
                    TenantGate.Lease l = gate.acquire("flow-" + (i % 64)).toCompletableFuture().get();
                    l.release();
                }));
                gate.close();
            }
            hotKey(shared, store(redis.uri(), metrics), metrics, hotRate, hotSeconds, "loopback");
            try (DelayedLink link = new DelayedLink("127.0.0.1", redis.port(), TimeUnit.MICROSECONDS.toNanos(hotDelayMicros));
                 LimitStore a = store(link.uri(), metrics); LimitStore b = store(link.uri(), metrics)) {
                hotKey(a, b, metrics, hotRate, hotSeconds, "+" + hotDelayMicros + " µs each way");
            }
        } finally {
            redis.closeAndDelete();
        }
        System.exit(0);
    }

    private static void hotKey(LimitStore a, LimitStore b, LimitMetrics metrics, int rate, int seconds, String link)
            throws Exception {
        awaitUp(a, b);
        KeyRateLimits[] gateways = {
                new KeyRateLimits(20, Duration.ofSeconds(1), a, "bench-hot:", TimeMeter.SYSTEM_MILLISECONDS, metrics),
                new KeyRateLimits(20, Duration.ofSeconds(1), b, "bench-hot:", TimeMeter.SYSTEM_MILLISECONDS, metrics)};
        String key = "hot-" + System.nanoTime();
        Histogram h = new org.HdrHistogram.ConcurrentHistogram(TimeUnit.SECONDS.toNanos(60), 3);
        java.util.concurrent.atomic.AtomicInteger admitted = new java.util.concurrent.atomic.AtomicInteger();
        double fallbacksBefore = metrics.fallbacks("rate");
        int n = rate * seconds;
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(n);
        long period = TimeUnit.SECONDS.toNanos(1) / rate;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            long due = start + i * period;
            while (System.nanoTime() < due) {
                Thread.onSpinWait();
            }
            long t0 = System.nanoTime();
            gateways[i % 2].tryAcquire(key).subscribe(d -> {
                h.recordValue(System.nanoTime() - t0);
                if (d.allowed()) {
                    admitted.incrementAndGet();
                }
                done.countDown();
            }, e -> done.countDown());
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        done.await(120, TimeUnit.SECONDS);
        print("rate, hot key " + rate + "/s, " + link, h);
        System.out.printf("  %d of %d admitted over %.2f s against 20/s (%d expected), %.0f fallbacks%n",
                admitted.get(), n, elapsed, Math.round(20 * (1 + elapsed)), metrics.fallbacks("rate") - fallbacksBefore);
    }

    /** Waits up to 20 s for every store to be usable (a benchmark of a store that never came up shows its fallback). */
    private static void awaitUp(LimitStore... stores) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Arrays.stream(stores).allMatch(LimitStore::up) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    private static LimitStore store(String uri, LimitMetrics metrics) {
        return new LimitStore(uri, Duration.ofMillis(50), Duration.ofSeconds(1), Duration.ofSeconds(2), metrics);
    }

    private interface Call {
        void run(int i) throws Exception;
    }

    private static Histogram time(int samples, int warmup, Call call) throws Exception {
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        for (int i = 0; i < warmup + samples; i++) {
            long t0 = System.nanoTime();
            call.run(i);
            if (i >= warmup) {
                h.recordValue(System.nanoTime() - t0);
            }
        }
        return h;
    }

    private static void print(String name, Histogram h) {
        System.out.printf("%-28s %8.1f %8.1f %8.1f %8.1f%n", name, h.getValueAtPercentile(50) / 1e3,
                h.getValueAtPercentile(99) / 1e3, h.getValueAtPercentile(99.9) / 1e3, h.getMaxValue() / 1e3);
    }
}
