package io.flotilla.gateway.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TCP link on loopback that delivers every byte {@code delayNanos} after it was sent, in order, in both
 * directions, without limiting how much is in flight: a store in another zone (a round trip of twice the
 * delay), or a loaded machine's scheduling, for a benchmark. One thread per direction reads, another
 * writes each chunk once it is due.
 */
final class DelayedLink implements AutoCloseable {

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    private final ServerSocket server;
    private final long delayNanos;

    DelayedLink(String host, int port, long delayNanos) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.delayNanos = delayNanos;
        daemon("link-accept", () -> {
            while (!server.isClosed()) {
                try {
                    Socket client = server.accept();
                    Socket upstream = new Socket(host, port);
                    client.setTcpNoDelay(true);
                    upstream.setTcpNoDelay(true);
                    pump(client, upstream);
                    pump(upstream, client);
                } catch (IOException e) {
                    return;
                }
            }
        });
    }

    /** {@code redis://127.0.0.1:port} of the link's near end. */
    String uri() {
        return "redis://127.0.0.1:" + server.getLocalPort();
    }

    private void pump(Socket from, Socket to) throws IOException {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        daemon("link-read", () -> {
            byte[] buffer = new byte[64 * 1024];
            try {
                for (int n; (n = in.read(buffer)) > 0; ) {
                    queue.add(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buffer, n)));
                }
            } catch (IOException ignored) {
                // the link is closed
            }
            queue.add(new Chunk(0, null));
        });
        daemon("link-write", () -> {
            try {
                for (Chunk c; (c = queue.take()).bytes() != null; ) {
                    long wait = c.dueNanos() - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    out.write(c.bytes());
                    out.flush();
                }
                to.close();
            } catch (IOException | InterruptedException ignored) {
                // the link is closed
            }
        });
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
