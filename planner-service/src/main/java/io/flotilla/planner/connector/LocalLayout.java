package io.flotilla.planner.connector;

import io.flotilla.planner.core.Pool;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * What the launcher's state file ({@code .flotilla/cluster.properties}) says about a local cluster:
 * which role worker N has (keys {@code layout.prefill}, {@code layout.decode}; as in the launcher,
 * without prefill or decode workers every worker is aggregated, otherwise workers 0 … prefill−1 are
 * prefill workers and every later number is a decode worker), and which worker processes it runs.
 *
 * @param prefill   prefill workers in the launcher's layout
 * @param decode    decode workers in the launcher's layout
 * @param processes worker id → start time of its recorded process, for the processes still alive
 *                  (starting, serving, or drained and idle: each holds its worker number's ports)
 */
public record LocalLayout(int prefill, int decode, Map<String, Instant> processes) {

    private static final String WORKER_PREFIX = "worker-";

    public LocalLayout {
        processes = Map.copyOf(processes);
    }

    public LocalLayout(int prefill, int decode) {
        this(prefill, decode, Map.of());
    }

    public static LocalLayout read(Path home) {
        Path file = home.resolve(".flotilla").resolve("cluster.properties");
        if (!Files.exists(file)) {
            return new LocalLayout(0, 0);
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        Map<String, Instant> processes = new TreeMap<>();
        for (String name : p.getProperty("services", "").split(",")) {
            String id = name.trim();
            if (!id.startsWith(WORKER_PREFIX)) {
                continue;
            }
            String pid = p.getProperty(id + ".pid");
            String started = p.getProperty(id + ".started");
            if (pid != null && started != null) {
                Instant at = Instant.ofEpochMilli(Long.parseLong(started.trim()));
                if (alive(Long.parseLong(pid.trim()), at)) {
                    processes.put(id, at);
                }
            }
        }
        return new LocalLayout(Integer.parseInt(p.getProperty("layout.prefill", "0").trim()),
                Integer.parseInt(p.getProperty("layout.decode", "0").trim()), processes);
    }

    /** The pid still names the process started at {@code startedAt} (a second of slack, as the launcher allows). */
    private static boolean alive(long pid, Instant startedAt) {
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .map(h -> h.info().startInstant().map(s -> Math.abs(s.toEpochMilli() - startedAt.toEpochMilli()) < 1000).orElse(true))
                .orElse(false);
    }

    public Pool poolOf(int n) {
        if (prefill == 0 && decode == 0) {
            return Pool.AGGREGATED;
        }
        return n < prefill ? Pool.PREFILL : Pool.DECODE;
    }

    /** The pool of a worker id of this cluster ({@code worker-N}), if it is one. */
    public Optional<Pool> poolOf(String workerId) {
        if (!workerId.startsWith(WORKER_PREFIX)) {
            return Optional.empty();
        }
        try {
            return Optional.of(poolOf(Integer.parseInt(workerId.substring(WORKER_PREFIX.length()))));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** True when the launcher runs a live process for this worker id. */
    public boolean runs(String workerId) {
        return processes.containsKey(workerId);
    }
}
