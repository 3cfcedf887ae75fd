package io.flotilla.gateway.bench;

import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.grpc.Channel;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * What the gateway's latency benchmarks share: the prompt, TTFT of a request sent straight to a
 * worker's {@code Generate}, samples taken from several threads at once, and percentiles. Used by
 * {@link GatewayStreamBenchmark} here and by bench's {@code GatewayOverheadBenchmark} (through this
 * module's test-jar).
 */
public final class TtftSampling {

    private TtftSampling() {
    }

    /** 512 token ids that differ for every {@code id}, so no two requests share a cached prefix. */
    public static int[] prompt(long id) {
        int[] p = new int[512];
        for (int i = 0; i < p.length; i++) {
            p[i] = (int) ((id * 7919 + i * 31) % 100_000);
        }
        return p;
    }

    /**
     * Milliseconds from sending {@code prompt} to a worker's {@code Generate} to the first chunk with a
     * token (the stream is read to its end); -1 when no token came. {@code model} may be empty.
     */
    public static double directTtft(Channel worker, String requestId, String model, int[] prompt, int maxTokens) {
        GenerateRequest.Builder r = GenerateRequest.newBuilder().setRequestId(requestId).setModel(model)
                .setStop(StopConditions.newBuilder().setMaxTokens(maxTokens).setIgnoreEos(true));
        for (int t : prompt) {
            r.addTokenIds(t);
        }
        long t0 = System.nanoTime();
        double ttft = -1;
        for (Iterator<GenerateChunk> it = WorkerServiceGrpc.newBlockingStub(worker).generate(r.build()); it.hasNext(); ) {
            GenerateChunk c = it.next();
            if (ttft < 0 && c.getTokenIdsCount() > 0) {
                ttft = (System.nanoTime() - t0) / 1e6;
            }
        }
        return ttft;
    }

    /**
     * {@code n} samples taken by {@code threads} threads at once, after {@code unmeasured} samples whose
     * results are dropped (they open connections); sorted.
     */
    public static List<Double> concurrently(int threads, int n, int unmeasured, Callable<Double> sample) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            collect(pool, unmeasured, sample);
            List<Double> out = collect(pool, n, sample);
            Collections.sort(out);
            return out;
        } finally {
            pool.shutdown();
        }
    }

    private static List<Double> collect(ExecutorService pool, int n, Callable<Double> sample) throws Exception {
        List<Future<Double>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            futures.add(pool.submit(sample));
        }
        List<Double> out = new ArrayList<>();
        for (Future<Double> f : futures) {
            out.add(f.get());
        }
        return out;
    }

    /** The {@code p}th percentile (nearest rank) of sorted samples. */
    public static double pct(List<Double> sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }
}
