package io.flotilla.cluster.launcher;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;

/** The table `up` and `status` print. */
final class StatusTable {

    private StatusTable() {
    }

    static void print(PrintStream out, List<RunningService> services, Path root) {
        String fmt = "%-12s %-8s %-10s %-8s %-34s %s%n";
        out.printf(fmt, "SERVICE", "PID", "STATE", "KAFKA", "PORTS", "LOG");
        for (RunningService s : services) {
            out.printf(fmt, s.name(), s.pid(), state(s), s.managementPort() == 0 ? "" : ProcessControl.component(
                    s.managementPort(), "kafka"), s.ports(), relative(root, s.log()));
        }
        String problems = services.stream().filter(s -> s.managementPort() > 0 && s.alive())
                .map(s -> ProcessControl.unhealthyComponents(s.managementPort()).replace("\n  health ", "\n  " + s.name() + " "))
                .filter(p -> !p.isEmpty()).reduce("", String::concat);
        if (!problems.isEmpty()) {
            out.println("not UP:" + problems);
        }
    }

    static String state(RunningService s) {
        if (!s.alive()) {
            return "dead";
        }
        if (s.managementPort() == 0) {
            return "running";
        }
        return ProcessControl.health(s.managementPort())
                .map(code -> code == 200 ? "up" : "unhealthy")
                .orElse("no-answer");
    }

    private static String relative(Path root, Path p) {
        return p.isAbsolute() && p.startsWith(root) ? root.relativize(p).toString() : p.toString();
    }
}
