package io.flotilla.worker.kvbm;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** One daemon thread running tier jobs, onboarding before offloads. */
public final class TierThread implements TierIo {

    private static final System.Logger LOG = System.getLogger(TierThread.class.getName());

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final ArrayDeque<Runnable> urgent = new ArrayDeque<>();
    private final ArrayDeque<Runnable> normal = new ArrayDeque<>();
    private final Thread thread;
    private boolean closed;

    public TierThread(String name) {
        thread = new Thread(this::loop, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void execute(Runnable job, boolean isUrgent) {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the KV tier thread is closed");
            }
            (isUrgent ? urgent : normal).addLast(job);
            work.signal();
        } finally {
            lock.unlock();
        }
    }

    private void loop() {
        while (true) {
            Runnable job;
            lock.lock();
            try {
                while (!closed && urgent.isEmpty() && normal.isEmpty()) {
                    work.awaitUninterruptibly();
                }
                if (closed) {
                    return;
                }
                job = urgent.isEmpty() ? normal.pollFirst() : urgent.pollFirst();
            } finally {
                lock.unlock();
            }
            try {
                job.run();
            } catch (RuntimeException | Error e) {
                LOG.log(System.Logger.Level.ERROR, "KV tier job failed", e);
            }
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            urgent.clear();
            normal.clear();
            work.signalAll();
        } finally {
            lock.unlock();
        }
        if (Thread.currentThread() != thread) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
