package io.flotilla.worker.engine.vllm;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * vLLM's {@code ZmqEventPublisher} as seen from the wire: a PUB socket (XPUB here, identical for a
 * subscriber, so the test can wait until a subscription arrived) sending {@code [topic, seq as 8-byte
 * big-endian, payload]} with seq from 0, and a ROUTER replay socket answering {@code [id, "", start]}
 * with {@code [id, "", seq, payload]} per buffered batch from {@code start} on, then
 * {@code [id, "", -1 as 8 bytes, ""]}.
 */
public final class FakeVllmPublisher implements AutoCloseable {

    private record Buffered(long seq, byte[] payload) {
    }

    /** JeroMQ-to-JeroMQ handshakes occasionally stall on loopback; a short limit makes them retry. */
    private static final int HANDSHAKE_MS = 500;

    private final ZContext ctx = new ZContext();
    private final ZMQ.Socket pub;
    private final byte[] topic;
    private final String endpoint;
    private final String replayEndpoint;
    private final List<Buffered> buffer = new ArrayList<>();
    private final AtomicInteger replayRequests = new AtomicInteger();
    private final Thread replayThread;
    private volatile boolean running = true;
    private volatile boolean replayWithTopic;
    private long nextSeq;

    public FakeVllmPublisher(String topic) {
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        pub = ctx.createSocket(SocketType.XPUB);
        pub.setLinger(0);
        pub.setReceiveTimeOut(100);
        pub.setHandshakeIvl(HANDSHAKE_MS);
        endpoint = "tcp://127.0.0.1:" + pub.bindToRandomPort("tcp://127.0.0.1");
        ZMQ.Socket router = ctx.createSocket(SocketType.ROUTER);
        router.setLinger(0);
        router.setReceiveTimeOut(50);
        router.setHandshakeIvl(HANDSHAKE_MS);
        replayEndpoint = "tcp://127.0.0.1:" + router.bindToRandomPort("tcp://127.0.0.1");
        replayThread = new Thread(() -> serveReplay(router), "fake-vllm-replay");
        replayThread.setDaemon(true);
        replayThread.start();
    }

    public String endpoint() {
        return endpoint;
    }

    public String replayEndpoint() {
        return replayEndpoint;
    }

    /** Blocks until a subscriber's subscription reached the PUB socket. */
    public void awaitSubscriber(Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < end) {
            byte[] msg = pub.recv();
            if (msg != null && msg.length > 0 && msg[0] == 1) {
                return;
            }
        }
        throw new AssertionError("no subscriber within " + timeout);
    }

    /** Publishes the next batch; returns its seq. */
    public synchronized long publish(byte[] payload) {
        long seq = buffer(payload);
        pub.sendMore(topic);
        pub.sendMore(seqBytes(seq));
        pub.send(payload);
        return seq;
    }

    /** Buffers the next batch for replay without sending it: the subscriber will see a gap. */
    public synchronized long publishLost(byte[] payload) {
        return buffer(payload);
    }

    /** Drops buffered batches below {@code seq}, as a full replay buffer does. */
    public synchronized void forgetBefore(long seq) {
        buffer.removeIf(b -> b.seq < seq);
    }

    /** A new engine process: sequence numbers start again from 0. */
    public synchronized void restart() {
        buffer.clear();
        nextSeq = 0;
    }

    /** Replay answers carry the topic before the seq, as some builds do. */
    public void replayWithTopic(boolean on) {
        replayWithTopic = on;
    }

    public int replayRequests() {
        return replayRequests.get();
    }

    private long buffer(byte[] payload) {
        long seq = nextSeq++;
        buffer.add(new Buffered(seq, payload));
        return seq;
    }

    private void serveReplay(ZMQ.Socket router) {
        while (running) {
            byte[] id = router.recv();
            if (id == null) {
                continue;
            }
            List<byte[]> frames = new ArrayList<>();
            while (router.hasReceiveMore()) {
                frames.add(router.recv());
            }
            if (frames.size() != 2) {
                continue;
            }
            replayRequests.incrementAndGet();
            long start = ByteBuffer.wrap(frames.get(1)).getLong();
            List<Buffered> snapshot;
            synchronized (this) {
                snapshot = List.copyOf(buffer);
            }
            for (Buffered b : snapshot) {
                if (b.seq >= start) {
                    router.sendMore(id);
                    router.sendMore(new byte[0]);
                    if (replayWithTopic) {
                        router.sendMore(topic);
                    }
                    router.sendMore(seqBytes(b.seq));
                    router.send(b.payload);
                }
            }
            router.sendMore(id);
            router.sendMore(new byte[0]);
            router.sendMore(seqBytes(-1));
            router.send(new byte[0]);
        }
    }

    private static byte[] seqBytes(long seq) {
        return ByteBuffer.allocate(8).putLong(seq).array();
    }

    @Override
    public void close() {
        running = false;
        try {
            replayThread.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ctx.close();
    }
}
