package io.flotilla.worker.kv;

import io.flotilla.transfer.Backend;
import io.flotilla.transfer.ErrorCode;
import io.flotilla.transfer.MemoryRegion;
import io.flotilla.transfer.Registration;
import io.flotilla.transfer.TransferAgent;
import io.flotilla.transfer.TransferException;
import io.flotilla.worker.engine.KvMemory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The engine's KV payload memory, registered with the worker's transfer agent. With the shm backend
 * enabled each engine region is one {@link TransferAgent#allocateShared} allocation, which a decode
 * worker on the same host reads through shared memory and any other through tcp; without it (e.g.
 * where /dev/shm is small, as in a container's default 64 MiB) a registered direct buffer, read
 * through tcp. When /dev/shm cannot hold a region ({@code allocateShared} fails with NO_MEMORY), that
 * region and every later one are registered direct buffers instead, read through tcp, and a warning
 * says so once. Regions live as long as the agent; the engine must be closed before the agent (its
 * memory may be unmapped then).
 */
public final class KvRegions implements KvMemory {

    private static final Logger log = LoggerFactory.getLogger(KvRegions.class);

    private final TransferAgent agent;
    private final boolean shared;
    private volatile boolean sharedExhausted;
    private final Map<Integer, Registration> regions = new ConcurrentHashMap<>();

    public KvRegions(TransferAgent agent) {
        this.agent = agent;
        this.shared = agent.enabledBackends().contains(Backend.SHM);
    }

    @Override
    public ByteBuffer region(int region, int bytes) {
        Registration r = shared && !sharedExhausted ? allocateShared(region, bytes) : registerDirect(bytes);
        if (regions.putIfAbsent(region, r) != null) {
            agent.deregister(r);
            throw new IllegalStateException("KV region " + region + " was already allocated");
        }
        return r.requireBuffer();
    }

    private Registration allocateShared(int region, int bytes) {
        try {
            return agent.allocateShared(bytes);
        } catch (TransferException e) {
            if (e.code() != ErrorCode.NO_MEMORY) {
                throw e;
            }
            sharedExhausted = true;
            log.warn("KV region {} ({} bytes) does not fit in shared memory ({}); it and every later region are direct "
                    + "memory, which decode workers read over tcp. Size /dev/shm for the whole KV pool to keep shm.",
                    region, bytes, e.getMessage());
            return registerDirect(bytes);
        }
    }

    private Registration registerDirect(int bytes) {
        return agent.register(MemoryRegion.of(ByteBuffer.allocateDirect(bytes)));
    }

    /** Whether engine region {@code region} lies in shared memory (shm-readable on this host). */
    public boolean isShared(int region) {
        Registration r = regions.get(region);
        return r != null && r.shared();
    }

    /** The agent's region id of engine region {@code region}. */
    public long registrationId(int region) {
        Registration r = regions.get(region);
        if (r == null) {
            throw new IllegalStateException("KV region " + region + " is not registered");
        }
        return r.id();
    }

    /** Engine regions allocated so far. */
    public int count() {
        return regions.size();
    }
}
