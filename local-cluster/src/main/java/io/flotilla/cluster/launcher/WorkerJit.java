package io.flotilla.cluster.launcher;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * How a worker's JVM compiles ({@code bin/flotilla up --worker-jit}). A worker is the process the planner starts
 * and stops with the load, so its start-up is paid on every scale-up, on cores that are busy serving the rise.
 *
 * <p>{@link #QUICK}, the default, stops at the client compiler (C1, {@code -XX:TieredStopAtLevel=1}): no C2
 * compilations during start-up or the first minutes of traffic. Measured with the cluster up and idle
 * (docs/benchmarks.md, "Worker start-up on the ramp"): 3.4–5.3 s of CPU to a started context instead of
 * 6.0–7.8 s, and 1.9 s instead of 3.2 s in the second minute of a 2 req/s stream, because C2 is still compiling
 * then. A worker's own work per request (gRPC, block hashes, KV events) is small next to its engine's, so C2's
 * faster code does not repay its compilations early in a worker's life under an elastic planner.
 * {@link #TIERED} is the JVM's default (C1, then C2 for hot code), for workers that live long on cores to spare.
 */
enum WorkerJit {
    QUICK(List.of("-XX:TieredStopAtLevel=1")),
    TIERED(List.of());

    private final List<String> jvmFlags;

    WorkerJit(List<String> jvmFlags) {
        this.jvmFlags = jvmFlags;
    }

    /** The JVM flags a worker gets, after the common ones. */
    List<String> jvmFlags() {
        return jvmFlags;
    }

    /** The name on the command line and in the cluster state: quick or tiered. */
    String flag() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Records this choice in the cluster state, so start-worker (and the planner's local connector) starts workers alike. */
    void save(ClusterState state) {
        state.setLayout("worker-jit", flag());
    }

    /** The choice {@code up} recorded; {@link #QUICK} for a cluster recorded before there was one. */
    static WorkerJit load(ClusterState state) {
        return parse(state.layout("worker-jit", QUICK.flag()));
    }

    static WorkerJit parse(String value) {
        for (WorkerJit jit : values()) {
            if (jit.flag().equals(value)) {
                return jit;
            }
        }
        throw new LauncherException("--worker-jit must be one of " + Arrays.stream(values()).map(WorkerJit::flag).toList()
                + ", not '" + value + "'");
    }
}
