package io.flotilla.transfer;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The initiator side of the Java engine's tcp backend: per remote agent a pool of connections,
 * each past its hello and used by one request at a time. A connection goes back to the pool only
 * when the exchange finished cleanly (the stream is in sync); anything else closes it.
 */
final class JavaTcpClient {

    private static final int POOL_MAX = 8;

    /** A remote agent's metadata and its idle connections; retired (and drained) when replaced. */
    static final class Remote {
        final AgentMetadata metadata;
        private final Deque<Connection> idle = new ArrayDeque<>();
        private boolean retired;

        Remote(AgentMetadata metadata) {
            this.metadata = metadata;
        }

        synchronized void retire() {
            retired = true;
            idle.forEach(Connection::close);
            idle.clear();
        }
    }

    private record Connection(Socket socket, DataInputStream in, OutputStream out, byte[] chunk) {
        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // already broken
            }
        }
    }

    private final String localName;
    private final int timeoutMs;

    JavaTcpClient(String localName, int timeoutMs) {
        this.localName = localName;
        this.timeoutMs = timeoutMs;
    }

    /** READ fills {@code views} from the remote descriptors; WRITE sends them. Target errors throw {@link TransferException}. */
    void transfer(Remote remote, int op, long[] remoteTriples, ByteBuffer[] views, byte[] notification) throws IOException {
        Connection c = borrow(remote);
        boolean clean = false;
        try {
            c.out().write(Wire.request(op, 0, 0, remoteTriples, notification));
            if (op == Wire.OP_READ) {
                check(Wire.readResponse(c.in()));
                for (ByteBuffer v : views) {
                    Wire.receive(c.in(), v, c.chunk());
                }
                if (notification.length > 0) {
                    check(Wire.readResponse(c.in())); // the target queued the notification
                }
            } else {
                for (ByteBuffer v : views) {
                    Wire.send(c.out(), v, c.chunk());
                }
                check(Wire.readResponse(c.in()));
            }
            clean = true;
        } finally {
            giveBack(remote, c, clean);
        }
    }

    /** Sends a notification and waits until the target queued it. */
    void sendNotification(Remote remote, byte[] payload) throws IOException {
        Connection c = borrow(remote);
        boolean clean = false;
        try {
            c.out().write(Wire.request(Wire.OP_NOTIF, 0, 0, new long[0], payload));
            check(Wire.readResponse(c.in()));
            clean = true;
        } finally {
            giveBack(remote, c, clean);
        }
    }

    private static void check(Wire.Response r) {
        if (r.code() != 0) {
            throw r.toException();
        }
    }

    private Connection borrow(Remote remote) throws IOException {
        synchronized (remote) {
            Connection c = remote.idle.pollFirst();
            if (c != null) {
                return c;
            }
        }
        AgentMetadata md = remote.metadata;
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(md.tcpHost(), md.tcpPort()), timeoutMs);
            s.setTcpNoDelay(true);
            s.setSoTimeout(timeoutMs);
            Connection c = new Connection(s, new DataInputStream(new BufferedInputStream(s.getInputStream(), 64 * 1024)),
                    s.getOutputStream(), new byte[Wire.CHUNK]);
            c.out().write(Wire.hello(localName, md.name(), md.instance()));
            check(Wire.readResponse(c.in()));
            return c;
        } catch (SocketTimeoutException e) {
            s.close();
            throw new TransferException(ErrorCode.TIMEOUT, "agent '" + md.name() + "' did not answer: " + e.getMessage(), e);
        } catch (IOException e) {
            s.close();
            throw new TransferException(ErrorCode.IO, "cannot reach agent '" + md.name() + "' at " + md.tcpHost() + ":" + md.tcpPort() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
    }

    private static void giveBack(Remote remote, Connection c, boolean clean) {
        synchronized (remote) {
            if (clean && !remote.retired && remote.idle.size() < POOL_MAX) {
                remote.idle.addLast(c);
                return;
            }
        }
        c.close();
    }
}
