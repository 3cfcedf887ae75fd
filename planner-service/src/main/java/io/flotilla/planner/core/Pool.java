package io.flotilla.planner.core;

import io.flotilla.protocol.v1.WorkerRole;

import java.util.Locale;
import java.util.Optional;

/** A pool of interchangeable workers the planner sizes: one per worker role. */
public enum Pool {
    PREFILL(WorkerRole.WORKER_ROLE_PREFILL),
    DECODE(WorkerRole.WORKER_ROLE_DECODE),
    AGGREGATED(WorkerRole.WORKER_ROLE_AGGREGATED);

    private final WorkerRole role;

    Pool(WorkerRole role) {
        this.role = role;
    }

    public WorkerRole role() {
        return role;
    }

    /** Lower-case name: metric tag, JSON key, the {@code flotilla.io/role} label value and the worker's role setting. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The pool of a worker role; empty for an unspecified role. */
    public static Optional<Pool> of(WorkerRole role) {
        for (Pool p : values()) {
            if (p.role == role) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    public static Pool parse(String label) {
        return valueOf(label.trim().toUpperCase(Locale.ROOT));
    }
}
