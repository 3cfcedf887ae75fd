package io.flotilla.protocol.kafka;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Hands items to a slow or failing sink without ever blocking the producer of the items: {@link #offer}
 * only puts them in a bounded queue, one daemon thread passes them to {@code send}. When the queue is
 * full, items are dropped and counted; a {@code send} that throws is counted and the loop goes on.
 */
public final class BoundedSender<T> implements AutoCloseable {

    private final BlockingQueue<T> queue;
    private final Consumer<T> send;
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong sendFailures = new AtomicLong();
    private final Thread sender;
    private volatile boolean running = true;

    public BoundedSender(String threadName, int capacity, Consumer<T> send) {
        this.queue = new ArrayBlockingQueue<>(capacity);
        this.send = send;
        this.sender = new Thread(this::sendLoop, threadName);
        this.sender.setDaemon(true);
        this.sender.start();
    }

    /** Queues {@code item}; false (and counted in {@link #dropped()}) when the queue is full. */
    public boolean offer(T item) {
        if (queue.offer(item)) {
            return true;
        }
        dropped.incrementAndGet();
        return false;
    }

    /** Items dropped because the queue was full. */
    public long dropped() {
        return dropped.get();
    }

    /** Items whose {@code send} threw. */
    public long sendFailures() {
        return sendFailures.get();
    }

    /** Items waiting to be sent. */
    public int queued() {
        return queue.size();
    }

    private void sendLoop() {
        while (running || !queue.isEmpty()) {
            T item;
            try {
                item = queue.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (item == null) {
                continue;
            }
            try {
                send.accept(item);
            } catch (RuntimeException e) {
                sendFailures.incrementAndGet();
            }
        }
    }

    /** Sends what is queued (up to a second), then stops the sender thread. */
    @Override
    public void close() {
        running = false;
        try {
            sender.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sender.interrupt();
    }
}
