package io.flotilla.worker.engine.vllm;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Subscribes to a vLLM (or SGLang) engine's KV event publisher and feeds the batches, in engine
 * sequence order, to a {@link VllmKvEventFeed}.
 *
 * <p>Wire contract (vLLM {@code ZmqEventPublisher}): the PUB socket sends multipart messages
 * {@code [topic, seq as 8-byte big-endian, msgpack KVEventBatch]} with {@code seq} counting from 0
 * per engine process. The replay socket is a ROUTER: a DEALER sends {@code ["", start seq as 8
 * bytes]} and receives {@code ["", seq, payload]} (some builds add the topic before {@code seq}) for
 * every buffered batch with {@code seq >= start}, then {@code ["", -1 as 8 bytes, ""]}.
 *
 * <p>Sequence handling, all on the one event thread:
 * <ul>
 *   <li>{@code seq == expected}: applied.</li>
 *   <li>{@code seq > expected} (dropped by ZMQ, or the agent joined late; {@code expected} starts at
 *       0): the missing batches are asked from the replay socket and applied in order. When the
 *       replay buffer no longer covers the gap (or there is no replay socket, or it does not answer
 *       within three tries of the replay timeout), the resident view is resynced:
 *       {@code AllBlocksCleared} goes out, then only batches after the last hole are applied. The
 *       view then misses blocks the engine still holds (cache misses, repaired as they are stored
 *       again) but never claims evicted ones.</li>
 *   <li>{@code seq < expected}: the engine restarted (vLLM numbers from 0 per process); everything
 *       known about the old process is dropped and the new one is read from its start.</li>
 *   <li>A payload that does not decode counts as a lost batch (resync).</li>
 *   <li>{@link #requestReset()} (the engine was unreachable and came back, so it may be a new
 *       process whose first batches all went missing): handled like a restart before the next message.</li>
 * </ul>
 */
public final class VllmKvEventSubscriber implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(VllmKvEventSubscriber.class);
    private static final long END_OF_REPLAY = -1;
    /**
     * ZMTP handshakes occasionally stall (seen between JeroMQ peers on loopback); with the default
     * 30 s limit a stalled SUB would hear nothing for half a minute. A short limit makes the socket
     * drop the connection and reconnect instead.
     */
    private static final int HANDSHAKE_MS = 1000;
    private static final int REPLAY_ATTEMPTS = 3;

    private final String endpoint;
    private final String replayEndpoint;
    private final byte[] topic;
    private final Duration replayTimeout;
    private final VllmKvEventFeed feed;
    private final KvEventCounters counters;
    private final Thread thread;
    private final AtomicBoolean resetRequested = new AtomicBoolean();
    private volatile boolean running = true;
    private volatile long expected;

    /**
     * @param endpoint       the engine's PUB endpoint, e.g. {@code tcp://vllm:5557}
     * @param replayEndpoint the engine's replay ROUTER endpoint, or null/blank for none
     * @param topic          topic prefix to subscribe to ("" for every topic)
     */
    public VllmKvEventSubscriber(String endpoint, String replayEndpoint, String topic, Duration replayTimeout,
                                 VllmKvEventFeed feed, String name) {
        this.endpoint = endpoint;
        this.replayEndpoint = replayEndpoint == null || replayEndpoint.isBlank() ? null : replayEndpoint;
        this.topic = (topic == null ? "" : topic).getBytes(StandardCharsets.UTF_8);
        this.replayTimeout = replayTimeout;
        this.feed = feed;
        this.counters = feed.counters();
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /**
     * The engine may have been replaced: forget everything known about it and read it again from
     * its first buffered batch. Safe to call from any thread; handled on the event thread.
     */
    public void requestReset() {
        resetRequested.set(true);
    }

    /** The engine sequence number the subscriber expects next. */
    public long expectedSeq() {
        return expected;
    }

    private void run() {
        try (ZContext ctx = new ZContext()) {
            ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
            sub.setLinger(0);
            sub.setRcvHWM(100_000);
            sub.setReceiveTimeOut(100);
            sub.setHandshakeIvl(HANDSHAKE_MS);
            sub.connect(endpoint);
            sub.subscribe(topic);
            log.info("subscribed to KV events at {} (replay: {})", endpoint, replayEndpoint == null ? "none" : replayEndpoint);
            while (running && !Thread.currentThread().isInterrupted()) {
                resetIfRequested();
                List<byte[]> frames = receive(sub);
                if (frames == null) {
                    continue;
                }
                resetIfRequested();
                if (frames.size() < 3 || frames.get(1).length != 8) {
                    counters.undecodable.increment();
                    continue;
                }
                long seq = ByteBuffer.wrap(frames.get(1)).getLong();
                try {
                    onMessage(ctx, seq, frames.get(2));
                } catch (RuntimeException e) { // a bug must not stop the stream: treat the batch as lost
                    log.error("KV event batch {} failed; resyncing the resident view", seq, e);
                    feed.resync();
                    expected = seq + 1;
                }
            }
        } catch (RuntimeException e) {
            if (running) {
                log.error("KV event subscriber for {} stopped: {}", endpoint, e.toString(), e);
            }
        }
    }

    private void resetIfRequested() {
        if (resetRequested.getAndSet(false)) {
            log.info("re-reading the engine's KV events from its first buffered batch");
            feed.engineRestarted();
            expected = 0;
        }
    }

    private void onMessage(ZContext ctx, long seq, byte[] payload) {
        if (seq < expected) {
            log.warn("KV event seq went back from {} to {}: engine restarted, dropping its old blocks", expected - 1, seq);
            feed.engineRestarted();
            expected = 0;
        }
        if (seq > expected) {
            fillGap(ctx, expected, seq);
        }
        applyPayload(payload);
        expected = seq + 1;
    }

    /** Applies batches {@code from .. to-1} from the replay socket, or resyncs when that cannot be done. */
    private void fillGap(ZContext ctx, long from, long to) {
        TreeMap<Long, byte[]> got = replay(ctx, from, to);
        long hole = -1;
        for (long s = to - 1; s >= from; s--) {
            if (!got.containsKey(s)) {
                hole = s;
                break;
            }
        }
        if (hole < 0) {
            counters.gapsRepaired.increment();
            log.debug("KV events {}..{} repaired from the replay socket", from, to - 1);
        } else {
            counters.gapsUnrepaired.increment();
            if (from == 0 && feed.position() == 0) {
                log.info("KV events before seq {} are no longer replayable; starting from an empty view", hole + 1);
            } else {
                log.warn("KV events {}..{} lost (replay {}); resyncing the resident view", from, hole,
                        replayEndpoint == null ? "not configured" : "does not cover them");
            }
            feed.resync();
        }
        got.tailMap(hole, false).values().forEach(this::applyPayload);
    }

    /** Batches {@code from .. to-1} the replay socket still holds; up to 3 tries, each on a fresh socket. */
    private TreeMap<Long, byte[]> replay(ZContext ctx, long from, long to) {
        TreeMap<Long, byte[]> got = new TreeMap<>();
        for (int attempt = 1; replayEndpoint != null && attempt <= REPLAY_ATTEMPTS; attempt++) {
            if (replayOnce(ctx, from, to, got)) {
                break;
            }
            log.warn("KV event replay from {} timed out after {} batches (attempt {} of {})", from, got.size(), attempt,
                    REPLAY_ATTEMPTS);
        }
        return got;
    }

    /** @return true when the end-of-replay marker arrived */
    private boolean replayOnce(ZContext ctx, long from, long to, TreeMap<Long, byte[]> got) {
        ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
        try {
            dealer.setLinger(0);
            dealer.setHandshakeIvl(HANDSHAKE_MS);
            dealer.connect(replayEndpoint);
            dealer.sendMore(new byte[0]);
            dealer.send(ByteBuffer.allocate(8).putLong(from).array());
            long deadline = System.nanoTime() + replayTimeout.toNanos();
            while (true) {
                long leftMs = (deadline - System.nanoTime()) / 1_000_000;
                if (leftMs <= 0) {
                    return false;
                }
                dealer.setReceiveTimeOut((int) Math.min(leftMs, Integer.MAX_VALUE));
                List<byte[]> frames = receive(dealer);
                if (frames == null) {
                    continue;
                }
                while (!frames.isEmpty() && frames.get(0).length == 0) {
                    frames.remove(0); // the envelope delimiter
                }
                if (frames.size() < 2 || frames.get(frames.size() - 2).length != 8) {
                    continue;
                }
                long seq = ByteBuffer.wrap(frames.get(frames.size() - 2)).getLong();
                if (seq == END_OF_REPLAY) {
                    return true;
                }
                if (seq >= from && seq < to) {
                    got.put(seq, frames.get(frames.size() - 1));
                }
            }
        } finally {
            ctx.destroySocket(dealer);
        }
    }

    private void applyPayload(byte[] payload) {
        VllmEventBatch batch;
        try {
            batch = VllmEventDecoder.decode(payload);
        } catch (VllmEventDecoder.FormatException e) {
            counters.undecodable.increment();
            log.warn("undecodable KV event batch ({}); treating it as lost", e.getMessage());
            feed.resync();
            return;
        }
        feed.apply(batch);
    }

    /** One whole multipart message, or null when none arrived within the socket's receive timeout. */
    private static List<byte[]> receive(ZMQ.Socket socket) {
        byte[] first = socket.recv();
        if (first == null) {
            return null;
        }
        List<byte[]> frames = new ArrayList<>(4);
        frames.add(first);
        while (socket.hasReceiveMore()) {
            frames.add(socket.recv());
        }
        return frames;
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
