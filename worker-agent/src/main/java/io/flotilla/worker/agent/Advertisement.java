package io.flotilla.worker.agent;

import io.flotilla.protocol.v1.EngineTiming;
import io.flotilla.protocol.v1.WorkerCapacity;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.EngineMeasurements;

import java.util.Optional;

/**
 * What a worker tells the cluster about its engine beyond its identity, read again for every heartbeat:
 * a real engine's capacity is known only once the engine has answered.
 *
 * <ul>
 *   <li>capacity: an explicit setting wins ({@code config}); else what the engine reports ({@code engine});
 *       a simulated engine's is its configuration ({@code simulator}); 0 with no source while unknown;</li>
 *   <li>timing: only the simulator's model goes into the status; a real engine's is learned from its
 *       requests and published with the load report, so routers never price a real GPU with simulator
 *       defaults.</li>
 * </ul>
 */
public interface Advertisement {

    String ENGINE = "engine";
    String CONFIG = "config";
    String SIMULATOR = "simulator";

    /** KV capacity and the limits the router may use. */
    WorkerCapacity capacity();

    /** {@link #ENGINE}, {@link #CONFIG}, {@link #SIMULATOR}, or "" while the capacity is unknown. */
    String capacitySource();

    /** Timing for the membership record: the simulator's model, else empty. */
    Optional<EngineTiming> timing();

    /** A simulated engine: its configured capacity and timing model. */
    static Advertisement simulated(WorkerCapacity capacity, EngineTiming timing) {
        return new Advertisement() {
            @Override
            public WorkerCapacity capacity() {
                return capacity;
            }

            @Override
            public String capacitySource() {
                return SIMULATOR;
            }

            @Override
            public Optional<EngineTiming> timing() {
                return Optional.of(timing);
            }
        };
    }

    /** An external engine: {@code configuredBlocks} when positive, else what {@code engine} reports. */
    static Advertisement external(Engine engine, int configuredBlocks) {
        return new Advertisement() {
            @Override
            public WorkerCapacity capacity() {
                return WorkerCapacity.newBuilder().setTotalKvBlocks(blocks()).build();
            }

            @Override
            public String capacitySource() {
                if (configuredBlocks > 0) {
                    return CONFIG;
                }
                return reported() > 0 ? ENGINE : "";
            }

            @Override
            public Optional<EngineTiming> timing() {
                return Optional.empty();
            }

            private int blocks() {
                return configuredBlocks > 0 ? configuredBlocks : Math.max(0, reported());
            }

            private int reported() {
                return engine.feature(EngineMeasurements.class).map(EngineMeasurements::reportedKvBlocks).orElse(0);
            }
        };
    }
}
