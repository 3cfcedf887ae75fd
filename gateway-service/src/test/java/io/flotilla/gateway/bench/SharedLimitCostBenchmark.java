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
import java.util.concurrent.TimeUnit;

/**
 * What the shared limits cost one request: the per-key rate limit's decision and the in-flight gate's
 * acquire + release, each timed around the call as the request path makes it, sequentially (the latency
 * a request sees, not throughput), against a real Redis on loopback, against no store (local buckets), and
 * against a store that is down (a closed port: the fallback within the call). Prints p50/p99/p99.9/max in
 * microseconds per case, after {@code warmup} calls of each.
 *
 * <pre>
 * java -cp … io.flotilla.gateway.bench.SharedLimitCostBenchmark 20000 5000     # samples, warm-up
 * </pre>
 */
public final class SharedLimitCostBenchmark {

    private SharedLimitCostBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int samples = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 5_000;
        LimitMetrics metrics = new LimitMetrics(new SimpleMeterRegistry());
        RedisServer redis = new RedisServer(RedisServer.Config.forTests(Files.createTempDirectory("limit-cost-"))).start();
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        try (LimitStore shared = store(redis.uri(), metrics); LimitStore down = store("redis://127.0.0.1:" + closed, metrics)) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!shared.up() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
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
        } finally {
            redis.closeAndDelete();
        }
        System.exit(0);
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
