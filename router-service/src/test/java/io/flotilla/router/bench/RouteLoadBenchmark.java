package io.flotilla.router.bench;

import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Route decisions over gRPC at a fixed rate against a running router (indexer call included):
 * open-loop arrivals, each a 128-block request followed by its Release.
 *
 * <pre>
 * bin/flotilla up -d --workers 4
 * ./mvnw -q -pl router-service test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.flotilla.router.bench.RouteLoadBenchmark -Dexec.args="1000 10"
 * </pre>
 */
public final class RouteLoadBenchmark {

    public static void main(String[] args) throws Exception {
        int rate = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", 7001).usePlaintext().build();
        var stub = RouterServiceGrpc.newBlockingStub(ch);
        SplittableRandom random = new SplittableRandom(1);
        long[][] prompts = new long[64][128];
        for (long[] p : prompts) {
            Arrays.setAll(p, i -> random.nextLong());
        }
        for (int i = 0; i < 2000; i++) { // warm-up
            route(stub, "warm-" + i, prompts[i % 64]);
        }
        int total = rate * seconds;
        long[] latencies = new long[total];
        AtomicInteger failures = new AtomicInteger();
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
                long t0 = System.nanoTime();
                try {
                    route(stub, "load-" + n, prompts[n % 64]);
                    latencies[n] = System.nanoTime() - t0;
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
        System.out.printf("%d Route calls in %.1f s (%.0f/s), %d failed; latency p50 %.3f ms, p99 %.3f ms, max %.3f ms%n",
                total, elapsed, total / elapsed, failures.get(), ok[ok.length / 2] / 1e6,
                ok[(int) (ok.length * 0.99)] / 1e6, ok[ok.length - 1] / 1e6);
        ch.shutdownNow();
    }

    private static void route(RouterServiceGrpc.RouterServiceBlockingStub stub, String id, long[] hashes) {
        RouteRequest.Builder r = RouteRequest.newBuilder().setRequestId(id).setModel("flotilla-sim").setIsl(2048)
                .setOsl(64).setBlockSize(16);
        for (long h : hashes) {
            r.addSeqHashes(h);
        }
        stub.withDeadlineAfter(2, TimeUnit.SECONDS).route(r.build());
        stub.release(RequestRef.newBuilder().setRequestId(id).build());
    }
}
