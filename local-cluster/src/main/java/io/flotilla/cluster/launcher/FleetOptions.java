package io.flotilla.cluster.launcher;

import io.flotilla.protocol.Ports;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A fleet of simulated workers ({@code bin/flotilla up --fleet N --fleet-per-jvm K}): N aggregated workers of the
 * cluster's model, {@code perJvm} to a worker JVM named {@code fleet-j}. Each worker is a worker as ever (its own
 * id {@code worker-n}, epoch, lease, load reports and KV event stream, its own gRPC endpoint); the workers of one
 * JVM share its heap, GC, Kafka producer, report scheduler, gRPC event loops and clock (worker-agent/README.md
 * "Fleets"). Every worker binds a free gRPC port and advertises it, so a fleet needs no port plan; fleet JVM j
 * answers health on the management port of worker j ({@link Ports#workerManagement}). Engines run without KV
 * payloads (kv-bytes-per-block 0): the fleet is for routing, membership and indexing at scale, not KV transfer.
 *
 * @param workers the fleet's workers (0: no fleet; the cluster's own workers instead)
 * @param perJvm  workers per JVM (1 … {@link #MAX_PER_JVM})
 */
public record FleetOptions(int workers, int perJvm) {

    public static final int DEFAULT_PER_JVM = 128;
    /** flotilla.worker.instances' bound. */
    public static final int MAX_PER_JVM = 512;
    public static final FleetOptions NONE = new FleetOptions(0, DEFAULT_PER_JVM);

    public FleetOptions {
        if (workers < 0) {
            throw new LauncherException("--fleet must not be negative: " + workers);
        }
        if (perJvm < 1 || perJvm > MAX_PER_JVM) {
            throw new LauncherException("--fleet-per-jvm must be between 1 and " + MAX_PER_JVM + ": " + perJvm);
        }
    }

    public boolean enabled() {
        return workers > 0;
    }

    /** Worker JVMs of the fleet. */
    public int jvms() {
        return (workers + perJvm - 1) / perJvm;
    }

    /** {@code -Xmx} of a fleet JVM of {@code count} workers: 96 MiB for the JVM's own and 1.5 MiB per worker. */
    static String heap(int count) {
        return (96 + count * 3 / 2) + "m";
    }

    /** The fleet's JVMs as services of {@code layout}'s cluster (its Kafka, model and speed-up). */
    public List<ServiceSpec> services(ClusterLayout layout) {
        List<ServiceSpec> out = new ArrayList<>();
        for (int j = 0; j < jvms(); j++) {
            int first = j * perJvm;
            int count = Math.min(perJvm, workers - first);
            int management = Ports.workerManagement(j);
            List<String> args = new ArrayList<>(layout.kafkaArgs());
            args.addAll(List.of(
                    "--server.port=" + management,
                    "--flotilla.worker.index=" + first,
                    "--flotilla.worker.instances=" + count,
                    "--flotilla.worker.grpc-port=0",
                    "--flotilla.worker.advertised-host=127.0.0.1",
                    "--flotilla.worker.role=aggregated",
                    "--flotilla.worker.sim.speedup=" + layout.simSpeedup(),
                    "--flotilla.worker.sim.kv-bytes-per-block=0"));
            args.addAll(layout.model().workerArgs());
            if (layout.kvbm().deviceBlocks() > 0) {
                args.add("--flotilla.worker.sim.total-blocks=" + layout.kvbm().deviceBlocks());
            }
            out.add(new ServiceSpec(name(j), "worker-agent", Map.of("mgmt", management), management, args, heap(count)));
        }
        return out;
    }

    /** Fleet JVM j's name. */
    public static String name(int j) {
        return "fleet-" + j;
    }

    void save(ClusterState state) {
        state.setLayout("fleet", Integer.toString(workers));
        state.setLayout("fleet-per-jvm", Integer.toString(perJvm));
    }

    static FleetOptions load(ClusterState state) {
        return new FleetOptions(Integer.parseInt(state.layout("fleet", "0")),
                Integer.parseInt(state.layout("fleet-per-jvm", Integer.toString(DEFAULT_PER_JVM))));
    }
}
