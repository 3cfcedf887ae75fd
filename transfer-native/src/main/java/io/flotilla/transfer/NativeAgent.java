package io.flotilla.transfer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An agent of the native library: every check and every byte moved happens in C; this class
 * converts arguments and keeps registered buffers reachable while they are registered.
 */
final class NativeAgent implements TransferAgent {

    private final String name;
    private final long handle;
    private final Map<Long, Registration> registrations = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private NativeAgent(String name, long handle) {
        this.name = name;
        this.handle = handle;
    }

    static NativeAgent create(String name, TransferConfig config) {
        Objects.requireNonNull(name, "name");
        long h = NativeBridge.agentCreate(utf8(name), Backend.bits(config.backends()), utf8(config.listenHost()),
                config.listenPort(), config.workerThreads(), (int) config.ioTimeout().toMillis());
        return new NativeAgent(name, h);
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Implementation implementation() {
        return Implementation.NATIVE;
    }

    @Override
    public Set<Backend> enabledBackends() {
        return Set.copyOf(Backend.fromBits(NativeBridge.agentBackends(handle)));
    }

    @Override
    public Registration register(MemoryRegion region) {
        Objects.requireNonNull(region, "region");
        Registration r;
        if (region.buffer().isPresent()) {
            ByteBuffer buffer = region.buffer().get();
            long address = NativeBridge.bufferAddress(buffer);
            long id = NativeBridge.registerAddress(handle, address, region.length(), region.kind().code());
            r = new Registration(name, id, address, region.length(), region.kind(), false, Optional.of(buffer));
        } else {
            long id = NativeBridge.registerAddress(handle, region.address(), region.length(), region.kind().code());
            r = new Registration(name, id, region.address(), region.length(), region.kind(), false, Optional.empty());
        }
        registrations.put(r.id(), r);
        return r;
    }

    @Override
    public Registration allocateShared(long length) {
        long[] idAndAddress = new long[2];
        ByteBuffer view = NativeBridge.allocShared(handle, length, idAndAddress);
        Registration r = new Registration(name, idAndAddress[0], idAndAddress[1], length, MemoryKind.DRAM, true,
                Optional.ofNullable(view));
        registrations.put(r.id(), r);
        return r;
    }

    @Override
    public void deregister(Registration registration) {
        if (!registration.agent().equals(name)) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, registration + " belongs to agent '" + registration.agent() + "', not '" + name + "'");
        }
        NativeBridge.deregister(handle, registration.id());
        registrations.remove(registration.id());
    }

    @Override
    public byte[] localMetadata() {
        return NativeBridge.localMetadata(handle);
    }

    @Override
    public String loadRemoteMetadata(byte[] metadata) {
        return new String(NativeBridge.loadRemote(handle, Objects.requireNonNull(metadata, "metadata")), StandardCharsets.UTF_8);
    }

    @Override
    public void invalidateRemoteMetadata(String remoteAgent) {
        NativeBridge.invalidateRemote(handle, utf8(remoteAgent));
    }

    @Override
    public TransferRequest read(String remoteAgent, XferDescList local, XferDescList remote, byte[] notification) {
        return post(NativeBridge.OP_READ, remoteAgent, local, remote, notification);
    }

    @Override
    public TransferRequest write(String remoteAgent, XferDescList local, XferDescList remote, byte[] notification) {
        return post(NativeBridge.OP_WRITE, remoteAgent, local, remote, notification);
    }

    private TransferRequest post(int op, String remoteAgent, XferDescList local, XferDescList remote, byte[] notification) {
        Objects.requireNonNull(remoteAgent, "remoteAgent");
        if (local.size() != remote.size()) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT,
                    "local list has " + local.size() + " descriptors, remote list " + remote.size());
        }
        long request = NativeBridge.post(handle, op, utf8(remoteAgent), local.triples(), remote.triples(), notification);
        return new NativeRequest(request);
    }

    @Override
    public void sendNotification(String remoteAgent, byte[] payload) {
        NativeBridge.sendNotification(handle, utf8(remoteAgent), Objects.requireNonNull(payload, "payload"));
    }

    @Override
    public List<Notification> pollNotifications() {
        Object[] raw = NativeBridge.pollNotifications(handle);
        List<Notification> out = new ArrayList<>(raw.length / 2);
        for (int i = 0; i + 1 < raw.length; i += 2) {
            out.add(new Notification(new String((byte[]) raw[i], StandardCharsets.UTF_8), (byte[]) raw[i + 1]));
        }
        return out;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            NativeBridge.agentDestroy(handle);
            registrations.clear();
        }
    }

    @Override
    public String toString() {
        return "NativeAgent[" + name + "]";
    }
}
