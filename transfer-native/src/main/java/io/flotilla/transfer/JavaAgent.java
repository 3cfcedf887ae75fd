package io.flotilla.transfer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pure-Java engine, used when the native library cannot load: tcp only, speaking the native
 * tcp backend's protocol ({@link Wire}) and metadata format ({@link AgentMetadata}), so Java and
 * native agents transfer to each other. Same validation rules as the native agent.
 */
final class JavaAgent implements TransferAgent, JavaServer.Target {

    private static final int NOTIFICATION_QUEUE_MAX = 65536;

    private final String name;
    private final long instance = new SecureRandom().nextLong();
    private final TransferConfig config;
    private final RegionTable regions;
    private final Map<String, JavaTcpClient.Remote> remotes = new ConcurrentHashMap<>();
    private final JavaTcpClient client;
    private final ConcurrentLinkedQueue<Notification> notifications = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final ExecutorService workers;
    private final JavaServer server;
    private volatile boolean closed;

    private JavaAgent(String name, TransferConfig config) throws IOException {
        this.name = name;
        this.config = config;
        this.regions = new RegionTable(name);
        this.client = new JavaTcpClient(name, (int) config.ioTimeout().toMillis());
        this.server = new JavaServer(this, config.listenHost(), config.listenPort(), (int) config.ioTimeout().toMillis());
        AtomicInteger n = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(config.workerThreads(), r -> {
            Thread t = new Thread(r, "transfer-worker-" + name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    static JavaAgent create(String name, TransferConfig config) {
        if (Objects.requireNonNull(name, "name").isEmpty() || name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 127) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, "agent name must have 1..127 bytes");
        }
        if (!Set.of(Backend.TCP).containsAll(config.backends())) {
            throw new TransferException(ErrorCode.UNSUPPORTED, "the Java engine has the tcp backend only, not " + config.backends());
        }
        try {
            return new JavaAgent(name, config);
        } catch (IOException e) {
            throw new TransferException(ErrorCode.IO, "cannot listen on " + config.listenHost() + ":" + config.listenPort() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long instance() {
        return instance;
    }

    @Override
    public RegionTable regions() {
        return regions;
    }

    @Override
    public Implementation implementation() {
        return Implementation.JAVA;
    }

    @Override
    public Set<Backend> enabledBackends() {
        return Set.of(Backend.TCP);
    }

    private void open() {
        if (closed) {
            throw new TransferException(ErrorCode.CLOSED, "agent '" + name + "' is closed");
        }
    }

    @Override
    public Registration register(MemoryRegion region) {
        open();
        if (region.kind() == MemoryKind.VRAM) {
            throw new TransferException(ErrorCode.UNSUPPORTED, "VRAM registration needs a CUDA build of the transfer library; this build moves DRAM only");
        }
        ByteBuffer buffer = region.buffer().orElseThrow(() -> new TransferException(ErrorCode.UNSUPPORTED,
                "raw native addresses need the native engine; the Java engine registers direct ByteBuffers"));
        return regions.add(buffer, false);
    }

    @Override
    public Registration allocateShared(long length) {
        open();
        if (length <= 0 || length > Integer.MAX_VALUE) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, "the Java engine allocates 1 byte to 2 GiB, not " + length);
        }
        return regions.add(ByteBuffer.allocateDirect((int) length), true);
    }

    @Override
    public void deregister(Registration registration) {
        if (!registration.agent().equals(name)) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, registration + " belongs to agent '" + registration.agent() + "'");
        }
        try {
            regions.remove(registration.id());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransferException(ErrorCode.CANCELLED, "interrupted while waiting for transfers on region " + registration.id());
        }
    }

    @Override
    public byte[] localMetadata() {
        open();
        return new AgentMetadata(name, instance, HostId.get(), Backend.TCP.bit(), config.listenHost(), server.port(), new byte[0],
                regions.describe()).encode();
    }

    @Override
    public String loadRemoteMetadata(byte[] metadata) {
        open();
        AgentMetadata md = AgentMetadata.decode(metadata);
        if (md.name().equals(name) && md.instance() == instance) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, "metadata describes this agent ('" + name + "')");
        }
        JavaTcpClient.Remote old = remotes.put(md.name(), new JavaTcpClient.Remote(md));
        if (old != null) {
            old.retire();
        }
        return md.name();
    }

    @Override
    public void invalidateRemoteMetadata(String remoteAgent) {
        JavaTcpClient.Remote old = remotes.remove(remoteAgent);
        if (old == null) {
            throw new TransferException(ErrorCode.UNKNOWN_AGENT, "no metadata loaded for agent '" + remoteAgent + "'");
        }
        old.retire();
    }

    @Override
    public TransferRequest read(String remoteAgent, XferDescList local, XferDescList remote, byte[] notification) {
        return post(Wire.OP_READ, remoteAgent, local, remote, notification);
    }

    @Override
    public TransferRequest write(String remoteAgent, XferDescList local, XferDescList remote, byte[] notification) {
        return post(Wire.OP_WRITE, remoteAgent, local, remote, notification);
    }

    private TransferRequest post(int op, String remoteAgent, XferDescList local, XferDescList remoteList, byte[] notification) {
        open();
        byte[] notif = notification == null ? new byte[0] : notification.clone();
        int n = local.size();
        if (n != remoteList.size() || n == 0 || n > Wire.MAX_DESCS) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, "a request needs 1.." + Wire.MAX_DESCS + " descriptor pairs of equal count, got "
                    + n + " local and " + remoteList.size() + " remote");
        }
        if (notif.length > Wire.MAX_NOTIFICATION) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, "notification of " + notif.length + " bytes exceeds " + Wire.MAX_NOTIFICATION);
        }
        for (int i = 0; i < n; i++) {
            if (local.get(i).length() != remoteList.get(i).length()) {
                throw new TransferException(ErrorCode.INVALID_ARGUMENT, "descriptor pair " + i + ": local length " + local.get(i).length()
                        + " != remote length " + remoteList.get(i).length());
            }
        }
        JavaTcpClient.Remote remote = remotes.get(Objects.requireNonNull(remoteAgent, "remoteAgent"));
        if (remote == null) {
            throw new TransferException(ErrorCode.UNKNOWN_AGENT, "unknown agent '" + remoteAgent + "': load its metadata first");
        }
        long[] resolved = RemoteDescs.resolve(remote.metadata, remoteList);
        if ((remote.metadata.backends() & Backend.TCP.bit()) == 0) {
            throw new TransferException(ErrorCode.UNSUPPORTED, "agent '" + remoteAgent + "' does not serve tcp; the Java engine has no other backend");
        }
        RegionTable.Pinned pinned = regions.pin(local.triples());
        JavaRequest request = new JavaRequest();
        try {
            workers.execute(() -> run(request, op, remote, resolved, pinned, notif));
        } catch (RuntimeException e) { // rejected: the agent is closing
            regions.unpin(pinned);
            throw new TransferException(ErrorCode.CLOSED, "agent '" + name + "' is closing");
        }
        return request;
    }

    private void run(JavaRequest request, int op, JavaTcpClient.Remote remote, long[] remoteTriples, RegionTable.Pinned pinned, byte[] notif) {
        try {
            if (closed) {
                request.finish(new TransferException(ErrorCode.CLOSED, "agent '" + name + "' closed before the request ran"));
            } else if (request.start()) {
                client.transfer(remote, op, remoteTriples, pinned.views(), notif);
                request.finish(null);
            }
        } catch (TransferException e) {
            request.finish(new TransferException(e.code(), "tcp: " + e.detail(), e));
        } catch (SocketTimeoutException e) {
            request.finish(new TransferException(ErrorCode.TIMEOUT, "tcp: " + e.getMessage(), e));
        } catch (IOException | UncheckedIOException e) {
            request.finish(new TransferException(ErrorCode.IO, "tcp: " + e.getMessage(), e));
        } finally {
            regions.unpin(pinned);
        }
    }

    @Override
    public void sendNotification(String remoteAgent, byte[] payload) {
        open();
        if (payload.length > Wire.MAX_NOTIFICATION) {
            throw new TransferException(ErrorCode.INVALID_ARGUMENT, "notification of " + payload.length + " bytes exceeds " + Wire.MAX_NOTIFICATION);
        }
        JavaTcpClient.Remote remote = remotes.get(remoteAgent);
        if (remote == null) {
            throw new TransferException(ErrorCode.UNKNOWN_AGENT, "unknown agent '" + remoteAgent + "': load its metadata first");
        }
        try {
            client.sendNotification(remote, payload);
        } catch (SocketTimeoutException e) {
            throw new TransferException(ErrorCode.TIMEOUT, "tcp: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new TransferException(ErrorCode.IO, "tcp: " + e.getMessage(), e);
        }
    }

    @Override
    public TransferException deliver(String from, byte[] payload) {
        if (queued.incrementAndGet() > NOTIFICATION_QUEUE_MAX) {
            queued.decrementAndGet();
            return new TransferException(ErrorCode.NO_MEMORY, "notification queue of '" + name + "' is full (" + NOTIFICATION_QUEUE_MAX + ")");
        }
        notifications.add(new Notification(from, payload));
        return null;
    }

    @Override
    public List<Notification> pollNotifications() {
        open();
        List<Notification> out = new ArrayList<>();
        for (Notification n; (n = notifications.poll()) != null; ) {
            queued.decrementAndGet();
            out.add(n);
        }
        return out;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        workers.shutdown();
        try {
            workers.awaitTermination(config.ioTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.close();
        remotes.values().forEach(JavaTcpClient.Remote::retire);
        remotes.clear();
    }

    @Override
    public String toString() {
        return "JavaAgent[" + name + ", " + EnumSet.of(Backend.TCP) + "]";
    }
}
