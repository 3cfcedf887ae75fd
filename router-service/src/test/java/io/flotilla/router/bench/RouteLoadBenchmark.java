package io.flotilla.router.bench;

import io.flotilla.protocol.Ports;
import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;

/**
 * Route decisions over gRPC at a fixed rate against a running router (indexer call included):
 * open-loop arrivals, each a 128-block request followed by its Release. The latency is the Route
 * call's alone, from its due time (a late sender counts against the result); the Release that
 * follows is not timed. Prints how many decisions had the indexer's answer ({@code mode_used}).
 *
 * <p>The floor under it: with target {@code ping-router} or {@code ping-indexer} the same harness
 * sends gRPC health checks (an empty unary call) to the router or the indexer at the same rate, so
 * a run shows what one loopback round trip costs on the machine as loaded at that moment.
 *
 * <pre>
 * bin/flotilla up -d --workers 4
 * ./mvnw -q -pl router-service test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.flotilla.router.bench.RouteLoadBenchmark -Dexec.args="1000 10 [route|ping-router|ping-indexer]"
 * </pre>
 */
public final class RouteLoadBenchmark {

    public static void main(String[] args) throws Exception {
        int rate = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        String target = args.length > 2 ? args[2] : "route";
        int port = target.equals("ping-indexer") ? Ports.INDEXER_GRPC : Ports.ROUTER_GRPC;
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        IntFunction<String> call = switch (target) {
            case "route" -> routeCall(ch);
            case "ping-router", "ping-indexer" -> pingCall(ch);
            default -> throw new IllegalArgumentException("target must be route, ping-router or ping-indexer: " + target);
        };
        for (int i = 0; i < 2000; i++) { // warm-up
            call.apply(-1 - i);
        }
        int total = rate * seconds;
        long[] latencies = new long[total];
        AtomicInteger failures = new AtomicInteger();
        Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(32);
        long start = System.nanoTime();
        long interval = 1_000_000_000L / rate;
        for (int i = 0; i < total; i++) {
            long due = start + i * interval;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            int n = i;
            pool.execute(() -> {
                try {
                    String outcome = call.apply(n);
                    latencies[n] = System.nanoTime() - due;
                    outcomes.computeIfAbsent(outcome, m -> new LongAdder()).increment();
                } catch (RuntimeException e) {
                    failures.incrementAndGet();
                    latencies[n] = Long.MAX_VALUE;
                }
            });
        }
        pool.shutdown();
        pool.awaitTermination(60, TimeUnit.SECONDS);
        double elapsed = (System.nanoTime() - start) / 1e9;
        long[] ok = Arrays.stream(latencies).filter(l -> l != Long.MAX_VALUE && l > 0).sorted().toArray();
        System.out.printf("%s: %d calls in %.1f s (%.0f/s), %d failed; latency p50 %.3f ms, p90 %.3f ms, "
                        + "p99 %.3f ms, p99.9 %.3f ms, max %.3f ms; %s%n",
                target, total, elapsed, total / elapsed, failures.get(), ok[ok.length / 2] / 1e6,
                ok[(int) (ok.length * 0.9)] / 1e6, ok[(int) (ok.length * 0.99)] / 1e6,
                ok[(int) (ok.length * 0.999)] / 1e6, ok[ok.length - 1] / 1e6, new TreeMap<>(outcomes));
        ch.shutdownNow();
    }

    /** Route, then Release sent without waiting for it; the outcome is the decision's {@code mode_used}. */
    private static IntFunction<String> routeCall(ManagedChannel ch) {
        var stub = RouterServiceGrpc.newBlockingStub(ch);
        var async = RouterServiceGrpc.newFutureStub(ch);
        SplittableRandom random = new SplittableRandom(1);
        long[][] prompts = new long[64][128];
        for (long[] p : prompts) {
            Arrays.setAll(p, i -> random.nextLong());
        }
        return n -> {
            String id = "load-" + n;
            RouteRequest.Builder r = RouteRequest.newBuilder().setRequestId(id).setModel("flotilla-sim").setIsl(2048)
                    .setOsl(64).setBlockSize(16);
            for (long h : prompts[Math.floorMod(n, 64)]) {
                r.addSeqHashes(h);
            }
            RouteDecision d = stub.withDeadlineAfter(2, TimeUnit.SECONDS).route(r.build());
            async.release(RequestRef.newBuilder().setRequestId(id).build());
            return d.getModeUsed().name();
        };
    }

    /** One gRPC health check: the cost of a loopback unary call with nothing behind it. */
    private static IntFunction<String> pingCall(ManagedChannel ch) {
        var stub = HealthGrpc.newBlockingStub(ch);
        return n -> stub.withDeadlineAfter(2, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance())
                .getStatus().name();
    }
}
