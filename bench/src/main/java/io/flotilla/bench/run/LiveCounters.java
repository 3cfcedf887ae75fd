package io.flotilla.bench.run;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters updated while the run goes: totals for the progress line and per-second series (by
 * second since the start of the run) for the throughput-over-time chart. Streamed tokens are counted
 * as they arrive; when a final usage reports more completion tokens than were counted, the
 * difference is added at the request's end. Thread-safe.
 */
public final class LiveCounters {

    private final long startNanos;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final LongAdder tokens = new LongAdder();
    private final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
    private long[] tokensPerSecond = new long[64];
    private long[] donePerSecond = new long[64];

    public LiveCounters(long startNanos) {
        this.startNanos = startNanos;
    }

    public long startNanos() {
        return startNanos;
    }

    void sent() {
        sent.incrementAndGet();
    }

    public void tokens(long nanos, int count) {
        tokens.add(count);
        bump(true, nanos, count);
    }

    void finished(long nanos, String outcome) {
        if ("ok".equals(outcome)) {
            completed.incrementAndGet();
        } else {
            failed.incrementAndGet();
            outcomes.computeIfAbsent(outcome, k -> new LongAdder()).increment();
        }
        bump(false, nanos, 1);
    }

    private synchronized void bump(boolean token, long nanos, long n) {
        int s = (int) Math.max(0, (nanos - startNanos) / 1_000_000_000L);
        if (s >= tokensPerSecond.length) {
            int len = Math.max(s + 1, tokensPerSecond.length * 2);
            tokensPerSecond = Arrays.copyOf(tokensPerSecond, len);
            donePerSecond = Arrays.copyOf(donePerSecond, len);
        }
        (token ? tokensPerSecond : donePerSecond)[s] += n;
    }

    public long sentCount() {
        return sent.get();
    }

    public long completedCount() {
        return completed.get();
    }

    public long failedCount() {
        return failed.get();
    }

    public long tokenCount() {
        return tokens.sum();
    }

    /** Failure outcomes and their counts, sorted by name. */
    public Map<String, Long> failures() {
        Map<String, Long> m = new TreeMap<>();
        outcomes.forEach((k, v) -> m.put(k, v.sum()));
        return m;
    }

    /** Output tokens received in each second of the run, up to {@code seconds}. */
    public synchronized long[] tokensPerSecond(int seconds) {
        return Arrays.copyOf(tokensPerSecond, seconds);
    }

    /** Requests finished (ok or not) in each second of the run, up to {@code seconds}. */
    public synchronized long[] finishedPerSecond(int seconds) {
        return Arrays.copyOf(donePerSecond, seconds);
    }

    /** Tokens per second over the last {@code window} whole seconds before {@code nowNanos}. */
    public synchronized double recentTokenRate(long nowNanos, int window) {
        int now = (int) ((nowNanos - startNanos) / 1_000_000_000L);
        long sum = 0;
        int n = 0;
        for (int s = now - window; s < now; s++) {
            if (s >= 0) {
                sum += s < tokensPerSecond.length ? tokensPerSecond[s] : 0;
                n++;
            }
        }
        return n == 0 ? 0 : (double) sum / n;
    }
}
