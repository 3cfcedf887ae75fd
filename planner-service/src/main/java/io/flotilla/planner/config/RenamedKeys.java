package io.flotilla.planner.config;

import io.flotilla.boot.config.KeyRenames;
import org.springframework.core.env.Environment;

/**
 * The planner's settings that moved into groups ({@link KeyRenames}). {@link PlannerProperties} refuses any key it
 * does not read, but its message names only the unread key; this one says what to write instead, so it runs first.
 */
final class RenamedKeys {

    private static final KeyRenames RENAMED = KeyRenames.under(PlannerProperties.PREFIX, "planner-service/README.md lists the planner's keys",
            "ready-time", "cold-start.ready-time",
            "learn-ready-time", "cold-start.learn",
            "ttft-target", "sla.ttft",
            "itl-target", "sla.itl",
            "headroom", "sla.headroom",
            "local-home", "local.home",
            "local-max-workers", "local.max-workers",
            "drain-deadline", "deadlines.drain",
            "group-ready-deadline", "deadlines.group-ready");

    private RenamedKeys() {
    }

    static void check(Environment environment) {
        RENAMED.check(environment);
    }
}
