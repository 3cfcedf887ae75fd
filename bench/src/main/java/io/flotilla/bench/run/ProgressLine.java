package io.flotilla.bench.run;

import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The terminal progress line, rewritten in place ({@code \r}) once a second while a run goes:
 * elapsed time, sent / ok / failed (by outcome) / in flight, ok requests per second since the start,
 * output tokens per second over the last 5 seconds.
 */
public final class ProgressLine implements AutoCloseable {

    private final LoadGenerator generator;
    private final PrintStream out;
    private final ScheduledExecutorService timer;
    private int lastLength;

    private ProgressLine(LoadGenerator generator, PrintStream out) {
        this.generator = generator;
        this.out = out;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-progress");
            t.setDaemon(true);
            return t;
        });
    }

    public static ProgressLine start(LoadGenerator generator, PrintStream out) {
        ProgressLine p = new ProgressLine(generator, out);
        p.timer.scheduleAtFixedRate(p::print, 1, 1, TimeUnit.SECONDS);
        return p;
    }

    private synchronized void print() {
        LiveCounters c = generator.counters();
        if (c == null) {
            return;
        }
        long now = System.nanoTime();
        double elapsed = (now - c.startNanos()) / 1e9;
        String line = format(elapsed, c.sentCount(), c.completedCount(), c.failedCount(), c.failures(),
                elapsed <= 0 ? 0 : c.completedCount() / elapsed, c.recentTokenRate(now, 5));
        int pad = Math.max(0, lastLength - line.length());
        out.print("\r" + line + " ".repeat(pad));
        out.flush();
        lastLength = line.length();
    }

    /** One progress line. */
    public static String format(double elapsedS, long sent, long ok, long failed, Map<String, Long> failures,
                                double okPerS, double tokensPerS) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "[%7.1fs] sent %d | ok %d | failed %d",
                elapsedS, sent, ok, failed));
        if (!failures.isEmpty()) {
            sb.append(" (");
            failures.forEach((k, v) -> sb.append(sb.charAt(sb.length() - 1) == '(' ? "" : " ").append(k).append('=').append(v));
            sb.append(')');
        }
        sb.append(String.format(Locale.ROOT, " | in flight %d | %.1f req/s | %.0f tok/s", Math.max(0, sent - ok - failed),
                okPerS, tokensPerS));
        return sb.toString();
    }

    @Override
    public synchronized void close() {
        timer.shutdownNow();
        print();
        out.println();
        out.flush();
    }
}
