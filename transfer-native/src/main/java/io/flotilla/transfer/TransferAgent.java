package io.flotilla.transfer;

import java.util.List;
import java.util.Set;

/**
 * A transfer agent, shaped like NVIDIA NIXL's: it registers memory, describes itself in metadata
 * (name, backend endpoints, registered regions), loads other agents' metadata, and moves bytes
 * between its registered memory and theirs with asynchronous reads and writes.
 *
 * <p>Contracts, for every engine and backend:
 * <ul>
 *   <li>Descriptors outside registered memory, unknown agents and deregistered regions are rejected
 *       before any byte moves: the initiator checks its own registrations and the remote metadata
 *       when a request is posted (and throws), the target checks its registrations before touching
 *       memory (and the request ends in ERROR).</li>
 *   <li>{@link #deregister} returns after every in-flight transfer touching the region finished;
 *       afterwards no byte moves in or out of it.</li>
 *   <li>A notification attached to a read or write is queued at the target after the bytes moved
 *       and before the request reports DONE.</li>
 *   <li>Metadata is a snapshot: after registering or deregistering, peers must load it again to see
 *       the change (the target still refuses deregistered regions on its own).</li>
 * </ul>
 * All methods are thread-safe.
 */
public interface TransferAgent extends AutoCloseable {

    /** Creates an agent; names identify agents to their peers and must be unique among them. */
    static TransferAgent create(String name, TransferConfig config) {
        Implementation impl = config.implementation();
        if (impl == Implementation.AUTO) {
            impl = NativeLibrary.loaded() ? Implementation.NATIVE : Implementation.JAVA;
        }
        if (impl == Implementation.NATIVE) {
            NativeLibrary.require();
            return NativeAgent.create(name, config);
        }
        return JavaAgent.create(name, config);
    }

    /** The backends an {@link Implementation#AUTO} agent can use in this process. */
    static Set<Backend> backends() {
        return capabilities().backends();
    }

    /** Whether the native library loaded. */
    static boolean nativeLoaded() {
        return NativeLibrary.loaded();
    }

    static Capabilities capabilities() {
        return NativeLibrary.capabilities();
    }

    String name();

    Implementation implementation();

    /** Backends this agent enabled (a subset of its configuration). */
    Set<Backend> enabledBackends();

    /** Registers DRAM (a direct buffer or a native address); VRAM fails with {@link ErrorCode#UNSUPPORTED}. */
    Registration register(MemoryRegion region);

    /**
     * Allocates {@code length} zeroed bytes and registers them. On the native engine this is POSIX
     * shared memory, the only memory a same-host peer's shm backend can reach; on the Java engine it
     * is a direct buffer. The memory is freed by {@link #deregister} (or {@link #close}).
     */
    Registration allocateShared(long length);

    void deregister(Registration registration);

    /** This agent's metadata: name, instance, endpoints, registered regions (ids, bases, lengths). */
    byte[] localMetadata();

    /** Loads (or replaces) a remote agent's metadata and returns that agent's name. */
    String loadRemoteMetadata(byte[] metadata);

    /** Forgets a remote agent; requests already posted to it finish. */
    void invalidateRemoteMetadata(String remoteAgent);

    /** Copies remote[i] into local[i] for every i. */
    TransferRequest read(String remoteAgent, XferDescList local, XferDescList remote, byte[] notification);

    /** Copies local[i] into remote[i] for every i. */
    TransferRequest write(String remoteAgent, XferDescList local, XferDescList remote, byte[] notification);

    /** Sends a notification and returns once the remote agent queued it. */
    void sendNotification(String remoteAgent, byte[] payload);

    /** Takes every notification received so far, oldest first. */
    List<Notification> pollNotifications();

    /**
     * Closes the agent: queued requests end in ERROR ({@link ErrorCode#CLOSED}), running ones
     * finish, the listener stops, shared allocations are freed.
     */
    @Override
    void close();
}
