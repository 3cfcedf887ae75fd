package io.flotilla.worker.engine.sim;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One thread's Linux scheduler counters ({@code /proc/self/task/<tid>/schedstat}): nanoseconds on a
 * CPU, nanoseconds runnable but waiting for a CPU (the run queue), and timeslices. Wall time minus
 * both is time the thread slept (a parked lock waiter, a page fault waiting for I/O). The thread is
 * found by its native name (Java names a thread's native counterpart after it, cut to 15 characters).
 * Where the file does not exist (not Linux), every reading is zero.
 */
final class SchedStat {

    private final Path file;

    private SchedStat(Path file) {
        this.file = file;
    }

    /** The thread whose native name is {@code name}; readings stay zero when none is found. */
    static SchedStat ofThreadNamed(String name) {
        String comm = name.length() > 15 ? name.substring(0, 15) : name;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                Path commFile = task.resolve("comm");
                if (Files.isReadable(commFile) && Files.readString(commFile).strip().equals(comm)) {
                    return new SchedStat(task.resolve("schedstat"));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or /proc unreadable: no figures
        }
        return new SchedStat(null);
    }

    boolean found() {
        return file != null;
    }

    /** {on-CPU ns, run-queue wait ns, timeslices}. */
    long[] read() {
        if (file == null) {
            return new long[3];
        }
        try {
            String[] f = Files.readString(file).strip().split("\\s+");
            return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])};
        } catch (IOException | RuntimeException e) {
            return new long[3];
        }
    }
}
