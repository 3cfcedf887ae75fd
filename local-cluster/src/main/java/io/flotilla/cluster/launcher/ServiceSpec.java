package io.flotilla.cluster.launcher;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One process of the local cluster.
 *
 * @param name           unique name, e.g. {@code router} or {@code worker-1}
 * @param module         Maven module whose {@code target/<module>-exec.jar} runs it; empty for Kafka
 * @param ports          named ports it listens on, in display order (e.g. grpc=7001, mgmt=8082)
 * @param managementPort port serving {@code /actuator/health}; 0 when the process has none (Kafka)
 * @param args           Spring Boot command-line arguments ({@code --key=value})
 * @param heap           -Xmx of the JVM
 * @param directMemory   -XX:MaxDirectMemorySize of the JVM (off-heap KV: device pool, host tier)
 */
public record ServiceSpec(String name, String module, Map<String, Integer> ports, int managementPort,
                          List<String> args, String heap, String directMemory) {

    static final String DEFAULT_DIRECT_MEMORY = "512m";

    public ServiceSpec {
        ports = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(ports));
        args = List.copyOf(args);
        directMemory = directMemory == null ? DEFAULT_DIRECT_MEMORY : directMemory;
    }

    public ServiceSpec(String name, String module, Map<String, Integer> ports, int managementPort, List<String> args,
                       String heap) {
        this(name, module, ports, managementPort, args, heap, DEFAULT_DIRECT_MEMORY);
    }

    /**
     * This spec with {@code extra} arguments appended; every other component (heap, direct memory) kept. A copy
     * made through the constructor dropped the worker's direct-memory size once, so a KV host tier never started.
     */
    public ServiceSpec withExtraArgs(List<String> extra) {
        List<String> all = new java.util.ArrayList<>(args);
        all.addAll(extra);
        return new ServiceSpec(name, module, ports, managementPort, all, heap, directMemory);
    }

    /** A worker JVM: one worker ({@code worker-n}) or a fleet of them ({@code fleet-j}). */
    public boolean isWorker() {
        return "worker-agent".equals(module);
    }

    public String portSummary() {
        StringBuilder sb = new StringBuilder();
        ports.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return sb.toString();
    }
}
