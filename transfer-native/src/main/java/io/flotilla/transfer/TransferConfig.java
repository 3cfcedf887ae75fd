package io.flotilla.transfer;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * How to create an agent.
 *
 * @param engine        native, Java, or native-if-loaded
 * @param backends      backends to enable; empty = the engine's default: tcp + shm for the native engine
 *                      (ucx only when listed: it pays off with RDMA NICs; without them its tcp
 *                      transport is slower than the tcp backend), tcp for the Java engine
 * @param listenHost    address the agent's listener binds and advertises in its metadata
 * @param listenPort    0 = ephemeral
 * @param workerThreads threads executing requests (requests beyond that many wait in order)
 * @param ioTimeout     send/receive timeout on connections (connecting included)
 */
public record TransferConfig(Engine engine, Set<Backend> backends, String listenHost, int listenPort, int workerThreads,
        Duration ioTimeout) {

    public TransferConfig {
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(listenHost, "listenHost");
        Objects.requireNonNull(ioTimeout, "ioTimeout");
        backends = backends.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(backends));
        if (listenPort < 0 || listenPort > 65535) {
            throw new IllegalArgumentException("listenPort " + listenPort);
        }
        if (workerThreads <= 0) {
            throw new IllegalArgumentException("workerThreads must be positive");
        }
        if (ioTimeout.isNegative() || ioTimeout.isZero() || ioTimeout.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("ioTimeout " + ioTimeout);
        }
    }

    /** AUTO engine, default backends, listener on 127.0.0.1 (ephemeral port), 2 workers, 30 s I/O timeout. */
    public static TransferConfig defaults() {
        return new TransferConfig(Engine.AUTO, Set.of(), "127.0.0.1", 0, 2, Duration.ofSeconds(30));
    }

    public TransferConfig withEngine(Engine e) {
        return new TransferConfig(e, backends, listenHost, listenPort, workerThreads, ioTimeout);
    }

    public TransferConfig withBackends(Backend first, Backend... rest) {
        return new TransferConfig(engine, EnumSet.of(first, rest), listenHost, listenPort, workerThreads, ioTimeout);
    }

    public TransferConfig withListen(String host, int port) {
        return new TransferConfig(engine, backends, host, port, workerThreads, ioTimeout);
    }

    public TransferConfig withWorkerThreads(int n) {
        return new TransferConfig(engine, backends, listenHost, listenPort, n, ioTimeout);
    }

    public TransferConfig withIoTimeout(Duration t) {
        return new TransferConfig(engine, backends, listenHost, listenPort, workerThreads, t);
    }
}
