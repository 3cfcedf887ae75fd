package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.worker.engine.EngineRequest;

import java.util.ArrayList;
import java.util.List;

/** Small fixtures shared by the simulator tests. */
final class SimTesting {

    private SimTesting() {
    }

    /** A small engine: 4-token blocks, no payloads unless asked. */
    static SimEngineConfig.Builder small() {
        return SimEngineConfig.builder().blockSize(4).totalBlocks(64).maxRunning(8).maxBatchTokens(64)
                .maxWaiting(16).maxContextTokens(256).kvBytesPerBlock(0).seed(7);
    }

    /** {@code n} distinct-looking token ids; different salts give different prompts. */
    static int[] prompt(int n, int salt) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = 1000 * salt + i + 1;
        }
        return out;
    }

    static EngineRequest request(String id, int[] prompt, int maxTokens) {
        return EngineRequest.of(id, prompt, maxTokens).withSeed(11L);
    }

    /** Steps until idle, advancing simulated time by each step; returns the reports. */
    /** Runs {@code request} alone on a fresh scheduler of {@code config} until it is done. */
    static RecordingSink run(SimEngineConfig config, EngineRequest request) {
        Scheduler s = new Scheduler(config, (p, e) -> { });
        RecordingSink sink = new RecordingSink();
        s.submit(request, sink);
        runUntilIdle(s, 1000);
        return sink;
    }

    /** Runs {@code request} alone on a fresh scheduler of the {@link #small()} configuration. */
    static RecordingSink run(EngineRequest request) {
        return run(small().build(), request);
    }

    static List<StepReport> runUntilIdle(Scheduler scheduler, int maxSteps) {
        List<StepReport> reports = new ArrayList<>();
        double now = 0;
        while (!scheduler.isIdle()) {
            if (reports.size() == maxSteps) {
                throw new AssertionError("not idle after " + maxSteps + " steps");
            }
            StepReport r = scheduler.step((long) now);
            now += r.stepMs();
            reports.add(r);
        }
        return reports;
    }

    static long[] seqHashes(SimEngineConfig config, int[] tokens) {
        return new BlockHasher(config.namespace(), config.blockSize()).seqHashes(tokens);
    }

    static int[] concat(int[] a, int[] b) {
        int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
