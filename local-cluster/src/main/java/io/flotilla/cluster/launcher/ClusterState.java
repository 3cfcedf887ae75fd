package io.flotilla.cluster.launcher;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * What the launcher started, persisted in {@code .flotilla/cluster.properties} so that status, down,
 * kill-worker and start-worker work from another invocation. Written atomically (temp file + rename).
 */
public final class ClusterState {

    private final Path file;
    private final Map<String, RunningService> services = new LinkedHashMap<>();
    private final Properties layout = new Properties();

    private ClusterState(Path file) {
        this.file = file;
    }

    public static ClusterState load(Path stateDir) {
        ClusterState state = new ClusterState(stateDir.resolve("cluster.properties"));
        if (!Files.exists(state.file)) {
            return state;
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(state.file)) {
            p.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + state.file + ": " + e.getMessage(), e);
        }
        for (String name : p.getProperty("services", "").split(",")) {
            if (name.isBlank()) {
                continue;
            }
            String start = p.getProperty(name + ".started");
            state.services.put(name, new RunningService(name, Long.parseLong(p.getProperty(name + ".pid", "-1")),
                    start == null ? null : Instant.ofEpochMilli(Long.parseLong(start)),
                    p.getProperty(name + ".ports", ""), Integer.parseInt(p.getProperty(name + ".mgmt", "0")),
                    Path.of(p.getProperty(name + ".log", ""))));
        }
        p.stringPropertyNames().stream().filter(k -> k.startsWith("layout."))
                .forEach(k -> state.layout.setProperty(k.substring("layout.".length()), p.getProperty(k)));
        return state;
    }

    public boolean isEmpty() {
        return services.isEmpty();
    }

    public List<RunningService> services() {
        return new ArrayList<>(services.values());
    }

    public RunningService get(String name) {
        return services.get(name);
    }

    public void put(RunningService s) {
        services.put(s.name(), s);
    }

    public void remove(String name) {
        services.remove(name);
    }

    /** Names of recorded processes that are still alive. */
    public List<RunningService> alive() {
        return services.values().stream().filter(RunningService::alive).toList();
    }

    public void setLayout(String key, String value) {
        layout.setProperty(key, value);
    }

    public String layout(String key, String fallback) {
        return layout.getProperty(key, fallback);
    }

    public void save() {
        Properties p = new Properties();
        p.setProperty("services", String.join(",", services.keySet()));
        for (RunningService s : services.values()) {
            p.setProperty(s.name() + ".pid", Long.toString(s.pid()));
            if (s.startedAt() != null) {
                p.setProperty(s.name() + ".started", Long.toString(s.startedAt().toEpochMilli()));
            }
            p.setProperty(s.name() + ".ports", s.ports());
            p.setProperty(s.name() + ".mgmt", Integer.toString(s.managementPort()));
            p.setProperty(s.name() + ".log", s.log().toString());
        }
        layout.forEach((k, v) -> p.setProperty("layout." + k, (String) v));
        try {
            Files.createDirectories(file.getParent());
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            try (Writer w = Files.newBufferedWriter(tmp)) {
                p.store(w, "Flotilla local cluster; written by bin/flotilla");
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    public void delete() {
        services.clear();
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
