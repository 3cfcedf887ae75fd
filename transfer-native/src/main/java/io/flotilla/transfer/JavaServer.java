package io.flotilla.transfer;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Java engine's listener: one accept thread and one thread per connection, serving the
 * {@link Wire} protocol against a {@link RegionTable} exactly as the native tcp.c does
 * (one-sided leases are refused: this engine has no shm or ucx).
 */
final class JavaServer implements AutoCloseable {

    /** What the server needs from its agent. */
    interface Target {
        String name();

        long instance();

        RegionTable regions();

        /** Queues a notification; returns null or the reason it could not. */
        TransferException deliver(String from, byte[] payload);
    }

    private final Target target;
    private final int ioTimeoutMs;
    private final ServerSocket server;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;

    JavaServer(Target target, String host, int port, int ioTimeoutMs) throws IOException {
        this.target = target;
        this.ioTimeoutMs = ioTimeoutMs;
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(host, port), 128);
        this.acceptor = new Thread(this::acceptLoop, "transfer-listen-" + target.name());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                connections.add(s);
                Thread t = new Thread(() -> serve(s), "transfer-conn-" + target.name());
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (server.isClosed()) {
                    return;
                }
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(ioTimeoutMs);
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 64 * 1024));
            OutputStream out = s.getOutputStream();
            String peer = hello(in, out);
            if (peer == null) {
                return;
            }
            byte[] chunk = new byte[Wire.CHUNK];
            for (;;) {
                s.setSoTimeout(0); // idle connections wait for the next request without a timeout
                int first = in.read();
                if (first < 0) {
                    return;
                }
                s.setSoTimeout(ioTimeoutMs);
                byte[] h = new byte[Wire.REQUEST_HEADER];
                h[0] = (byte) first;
                in.readFully(h, 1, h.length - 1);
                if (!request(Wire.parseHeader(h), peer, in, out, chunk)) {
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            // connection ends; the initiator sees the failure on its side
        } finally {
            connections.remove(s);
        }
    }

    private String hello(DataInputStream in, OutputStream out) throws IOException {
        ByteBuffer head = Wire.le(in.readNBytes(8));
        if (head.remaining() < 8 || head.getInt() != Wire.MAGIC_HELLO) {
            return null;
        }
        int version = Short.toUnsignedInt(head.getShort());
        int initiatorLength = Short.toUnsignedInt(head.getShort());
        if (version != Wire.VERSION) {
            out.write(Wire.response(ErrorCode.PROTOCOL.code(), 0, "unsupported protocol version"));
            return null;
        }
        String initiator = new String(in.readNBytes(initiatorLength), StandardCharsets.UTF_8);
        byte[] tl = in.readNBytes(2);
        String targetName = new String(in.readNBytes(Short.toUnsignedInt(Wire.le(tl).getShort())), StandardCharsets.UTF_8);
        long instance = Wire.le(in.readNBytes(8)).getLong();
        if (!targetName.equals(target.name()) || instance != target.instance()) {
            out.write(Wire.response(ErrorCode.UNKNOWN_AGENT.code(), 0,
                    "unknown agent '" + targetName + "': this endpoint serves '" + target.name() + "' (another instance or name)"));
            return null;
        }
        out.write(Wire.response(0, 0, ""));
        return initiator;
    }

    /** Serves one request; false closes the connection. */
    private boolean request(Wire.Header h, String peer, DataInputStream in, OutputStream out, byte[] chunk) throws IOException {
        long[] triples = Wire.readDescs(in, h.descs());
        byte[] notification = in.readNBytes(h.notificationLength());
        long total = 0;
        for (int i = 2; i < triples.length; i += 3) {
            total += triples[i];
            if (triples[i] < 0 || total < 0) {
                return false;
            }
        }
        switch (h.op()) {
            case Wire.OP_READ, Wire.OP_WRITE -> {
                RegionTable.Pinned pinned;
                try {
                    if (h.descs() == 0) {
                        throw new TransferException(ErrorCode.INVALID_ARGUMENT, "request without descriptors");
                    }
                    pinned = target.regions().pin(triples);
                } catch (TransferException e) {
                    if (h.op() == Wire.OP_WRITE) {
                        Wire.drain(in, total, chunk);
                    }
                    out.write(Wire.response(e.code().code(), 0, e.detail()));
                    return true;
                }
                try {
                    if (h.op() == Wire.OP_READ) {
                        out.write(Wire.response(0, 0, ""));
                        for (ByteBuffer v : pinned.views()) {
                            Wire.send(out, v, chunk);
                        }
                    } else {
                        for (ByteBuffer v : pinned.views()) {
                            Wire.receive(in, v, chunk);
                        }
                    }
                } finally {
                    target.regions().unpin(pinned);
                }
                if (notification.length > 0 || h.op() == Wire.OP_WRITE) {
                    TransferException e = notification.length > 0 ? target.deliver(peer, notification) : null;
                    out.write(e == null ? Wire.response(0, 0, "") : Wire.response(e.code().code(), 0, e.detail()));
                }
                return true;
            }
            case Wire.OP_NOTIF -> {
                TransferException e = target.deliver(peer, notification);
                out.write(e == null ? Wire.response(0, 0, "") : Wire.response(e.code().code(), 0, e.detail()));
                return true;
            }
            case Wire.OP_LEASE -> {
                out.write(Wire.response(ErrorCode.UNSUPPORTED.code(), 0, "no one-sided backend on '" + target.name() + "' (Java engine)"));
                return true;
            }
            default -> {
                out.write(Wire.response(ErrorCode.PROTOCOL.code(), 0, "unknown operation"));
                return false;
            }
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (Socket s : connections) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        try {
            acceptor.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
