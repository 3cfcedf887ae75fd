package io.flotilla.worker.kvbm;

import java.util.ArrayDeque;

/** A {@link TierIo} whose jobs run only when the test says so, on the test's thread: urgent ones first. */
public final class ManualTierIo implements TierIo {

    private final ArrayDeque<Runnable> urgent = new ArrayDeque<>();
    private final ArrayDeque<Runnable> normal = new ArrayDeque<>();
    private boolean closed;

    @Override
    public synchronized void execute(Runnable job, boolean isUrgent) {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        (isUrgent ? urgent : normal).addLast(job);
    }

    /** Runs the next queued job; false when none is queued. */
    public boolean runOne() {
        Runnable job;
        synchronized (this) {
            job = urgent.isEmpty() ? normal.pollFirst() : urgent.pollFirst();
        }
        if (job == null) {
            return false;
        }
        job.run();
        return true;
    }

    /** Runs jobs (including those the jobs queue) until none is left; returns how many ran. */
    public int runAll() {
        int n = 0;
        while (runOne()) {
            n++;
        }
        return n;
    }

    public synchronized int queued() {
        return urgent.size() + normal.size();
    }

    @Override
    public synchronized void close() {
        closed = true;
        urgent.clear();
        normal.clear();
    }
}
