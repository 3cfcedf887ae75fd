package io.flotilla.transfer;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * How to create an agent.
 *
 * @param implementation native, Java, or native-if-loaded
 * @param backends      backends to enable; empty = the implementation's default: tcp + shm for the native implementation
 *                      (ucx only when listed: it pays off with RDMA NICs; without them its tcp
 *                      transport is slower than the tcp backend), tcp for the Java implementation
 * @param listenHost    address the agent's listener binds and advertises in its metadata
 * @param listenPort    0 = ephemeral
 * @param workerThreads threads executing requests (requests beyond that many wait in order)
 * @param ioTimeout     send/receive timeout on connections (connecting included)
 */
public record TransferConfig(Implementation implementation, Set<Backend> backends, String listenHost, int listenPort, int workerThreads,
        Duration ioTimeout) {

    public TransferConfig {
        Objects.requireNonNull(implementation, "implementation");
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

    /** AUTO implementation, default backends, listener on 127.0.0.1 (ephemeral port), 2 workers, 30 s I/O timeout. */
    public static TransferConfig defaults() {
        return new TransferConfig(Implementation.AUTO, Set.of(), "127.0.0.1", 0, 2, Duration.ofSeconds(30));
    }

    public TransferConfig withImplementation(Implementation e) {
        return new TransferConfig(e, backends, listenHost, listenPort, workerThreads, ioTimeout);
    }

    public TransferConfig withBackends(Backend first, Backend... rest) {
        return new TransferConfig(implementation, EnumSet.of(first, rest), listenHost, listenPort, workerThreads, ioTimeout);
    }

    public TransferConfig withListen(String host, int port) {
        return new TransferConfig(implementation, backends, host, port, workerThreads, ioTimeout);
    }

    public TransferConfig withWorkerThreads(int n) {
        return new TransferConfig(implementation, backends, listenHost, listenPort, n, ioTimeout);
    }

    public TransferConfig withIoTimeout(Duration t) {
        return new TransferConfig(implementation, backends, listenHost, listenPort, workerThreads, t);
    }
}
