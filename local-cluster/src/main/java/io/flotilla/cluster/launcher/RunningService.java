package io.flotilla.cluster.launcher;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;

/**
 * A process the launcher started, as recorded in the state file.
 *
 * @param name           service name
 * @param pid            operating-system process id
 * @param startedAt      the process's start time, to tell it from a later process that reused the pid
 * @param ports          port summary for display
 * @param managementPort port of /actuator/health; 0 for none
 * @param log            log file
 */
public record RunningService(String name, long pid, Instant startedAt, String ports, int managementPort, Path log) {

    /** The live process, if this pid still names the process the launcher started. */
    public Optional<ProcessHandle> handle() {
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(h -> {
            Optional<Instant> start = h.info().startInstant();
            // A start time is the kernel's ticks since boot plus the boot time each JVM reads once from /proc/stat,
            // which is whole seconds and moves by one as the wall clock is slewed: the JVM that recorded a start (the
            // planner, for a worker it started) and the one asking can be a second apart for the same process. Two
            // seconds of slack still tell a reused pid apart, which the kernel hands out again only after wrapping.
            return start.isEmpty() || startedAt == null
                    || Math.abs(start.get().toEpochMilli() - startedAt.toEpochMilli()) <= START_SLACK_MS;
        });
    }

    private static final long START_SLACK_MS = 2_000;

    public boolean alive() {
        return handle().isPresent();
    }
}
