package io.flotilla.bench.run;

import io.flotilla.bench.client.CompletionSender;
import io.flotilla.bench.client.StreamMeasurement;
import io.flotilla.bench.client.StreamRecorder;
import io.flotilla.bench.stats.LatencyStats;
import io.flotilla.bench.stats.LruHitRate;
import io.flotilla.bench.stats.OracleHitRate;
import io.flotilla.bench.workload.Completion;
import io.flotilla.bench.workload.PlannedRequest;
import io.flotilla.bench.workload.Workload;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Replays a workload against a {@link CompletionSender}.
 *
 * <p>One dispatcher thread (the caller of {@link #run()}) owns the workload and the oracle: it takes
 * open-loop arrivals in order, waits until each is due ({@code arrivalMs / speedup} after the start),
 * waits for a free slot when {@code concurrency} is capped, expands the prompt, feeds it to the oracle
 * and sends it. Responses complete on HTTP threads, which only record results and hand completions
 * back to the dispatcher; the dispatcher asks the workload for follow-up turns and schedules them
 * {@code delayMs / speedup} after the completion. Sending stops when the workload is exhausted,
 * {@code maxRequests} were sent, {@code duration} passed or {@link #stop()} was called; in-flight
 * requests then finish (after {@link #stop()}, for at most {@code drainWait}, then they are cancelled).
 */
public final class LoadGenerator {

    private final RunConfig config;
    private final Workload workload;
    private final CompletionSender sender;
    private final RequestLabels.Labeler labeler;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<Finished> finished = new ArrayDeque<>();
    private final PriorityQueue<Due> followUps = new PriorityQueue<>();
    private final Set<StreamRecorder> inFlight = ConcurrentHashMap.newKeySet();
    private final List<RequestResult> results = new ArrayList<>();
    private final LatencyStats gaps = new LatencyStats(LatencyStats.DEFAULT_CAPACITY, 7);
    private volatile boolean stopRequested;
    private volatile LiveCounters counters;
    private long startNanos;
    private double maxLagMs;
    /** The same-capacity LRU reference; dispatcher thread only, like the oracle. */
    private LruHitRate lru;

    public LoadGenerator(RunConfig config, Workload workload, CompletionSender sender) {
        this(config, workload, sender, id -> RequestLabels.NONE);
    }

    /** @param labeler tenant and priority of each request, by its number */
    public LoadGenerator(RunConfig config, Workload workload, CompletionSender sender, RequestLabels.Labeler labeler) {
        this.config = config;
        this.workload = workload;
        this.sender = sender;
        this.labeler = labeler;
    }

    /** Counters of the running (or last) run; null before {@link #run()} starts. */
    public LiveCounters counters() {
        return counters;
    }

    /** Asks the dispatcher to stop sending; {@link #run()} then drains and returns. Any thread. */
    public void stop() {
        stopRequested = true;
        signal();
    }

    public RunResult run() {
        Instant startedAt = Instant.now();
        startNanos = System.nanoTime();
        counters = new LiveCounters(startNanos);
        OracleHitRate oracle = new OracleHitRate(config.blockSize());
        lru = config.lruBlocks() > 0 ? new LruHitRate(config.blockSize(), config.lruBlocks()) : null;
        long deadline = config.duration() == null ? Long.MAX_VALUE : startNanos + config.duration().toNanos();
        PlannedRequest open = workload.next();
        long sent = 0;
        String reason = "workload-exhausted";
        lock.lock();
        try {
            while (true) {
                drainFinished();
                if (stopRequested) {
                    reason = "stopped";
                    break;
                }
                if (config.maxRequests() > 0 && sent >= config.maxRequests()) {
                    reason = "max-requests";
                    break;
                }
                long now = System.nanoTime();
                if (now >= deadline) {
                    reason = "duration";
                    break;
                }
                Due follow = followUps.peek();
                long openDue = open == null ? Long.MAX_VALUE : startNanos + (long) (open.arrivalMs() / config.speedup() * 1e6);
                long due = Math.min(openDue, follow == null ? Long.MAX_VALUE : follow.dueNanos);
                if (due == Long.MAX_VALUE) {
                    if (inFlight.isEmpty() && finished.isEmpty()) {
                        break;
                    }
                    await(deadline - now);
                    continue;
                }
                if (due > now) {
                    await(Math.min(due, deadline) - now);
                    continue;
                }
                if (config.concurrency() > 0 && inFlight.size() >= config.concurrency()) {
                    await(deadline - now);
                    continue;
                }
                PlannedRequest next;
                if (follow != null && follow.dueNanos <= openDue) {
                    next = followUps.poll().request;
                } else {
                    next = open;
                    open = workload.next();
                }
                maxLagMs = Math.max(maxLagMs, (now - due) / 1e6);
                dispatch(next, sent++, (due - startNanos) / 1e6, oracle);
            }
            drain();
        } finally {
            lock.unlock();
        }
        double durationS = (System.nanoTime() - startNanos) / 1e9;
        List<RequestResult> done;
        synchronized (results) {
            done = new ArrayList<>(results);
        }
        done.sort((a, b) -> Long.compare(a.id(), b.id()));
        int seconds = (int) Math.ceil(durationS);
        return new RunResult(workload.describe(), startedAt, durationS, done, gaps, oracle.promptTokens(),
                oracle.cachedTokens(), counters.tokensPerSecond(seconds), counters.finishedPerSecond(seconds), maxLagMs, reason,
                lru == null ? 0 : lru.capacityBlocks(), lru == null ? 0 : lru.cachedTokens(), Map.of());
    }

    /** Called with the lock held; releases it while the prompt is expanded and sent. */
    private void dispatch(PlannedRequest request, long id, double scheduledMs, OracleHitRate oracle) {
        lock.unlock();
        try {
            send(request, id, scheduledMs, oracle);
        } finally {
            lock.lock();
        }
    }

    private void send(PlannedRequest request, long id, double scheduledMs, OracleHitRate oracle) {
        int[] tokens = request.prompt().tokens();
        int oracleCached = oracle.observe(tokens);
        if (lru != null) {
            lru.observe(tokens);
        }
        long sentNanos = System.nanoTime();
        LiveCounters live = counters;
        StreamRecorder recorder = new StreamRecorder(sentNanos, System::nanoTime, workload.wantsOutputTokenIds(), live::tokens);
        inFlight.add(recorder);
        live.sent();
        double sentMs = (sentNanos - startNanos) / 1e6;
        int promptLen = tokens.length;
        RequestLabels labels = labeler.label(id);
        sender.send(tokens, request.maxTokens(), recorder, labels).whenComplete((m, error) -> {
            StreamMeasurement measured = m != null ? m : recorder.finish(error);
            RequestResult r = result(id, request, scheduledMs, sentMs, promptLen, oracleCached, measured, labels);
            long endNanos = System.nanoTime();
            int uncounted = measured.completionTokens() - measured.streamedTokens();
            if (uncounted > 0) {
                live.tokens(endNanos, uncounted);
            }
            live.finished(endNanos, r.end().outcome());
            synchronized (results) {
                results.add(r);
                if (measured.ok()) {
                    for (float g : measured.gapsMs()) {
                        gaps.add(g);
                    }
                }
            }
            lock.lock();
            try {
                inFlight.remove(recorder);
                finished.add(new Finished(request, new Completion(measured.ok(), measured.completionTokens(),
                        measured.outputTokenIds()), endNanos));
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        });
    }

    private static RequestResult result(long id, PlannedRequest req, double scheduledMs, double sentMs, int promptLen,
                                        int oracleCached, StreamMeasurement m, RequestLabels labels) {
        var u = m.usage();
        return new RequestResult(
                new RequestResult.Sent(id, req.session(), req.turn(), scheduledMs, sentMs, promptLen, req.maxTokens(),
                        oracleCached, labels.tenant(), labels.priority()),
                new RequestResult.End(m.outcome(), m.httpStatus(), m.errorCode(), m.error()),
                new RequestResult.Timing(m.ttftMs(), m.e2eMs(), m.itlMeanMs(), m.itlMaxMs(), m.chunks(), m.queueMs()),
                new RequestResult.Usage(u == null ? -1 : u.promptTokens(), u == null ? -1 : u.cachedTokens(),
                        m.completionTokens()),
                new RequestResult.Placement(m.worker(), m.prefillWorker(), m.mode()));
    }

    /** Hands completions to the workload (dispatcher thread, lock held). */
    private void drainFinished() {
        Finished f;
        while ((f = finished.poll()) != null) {
            Workload.FollowUp next = stopRequested ? null : workload.followUp(f.request, f.completion);
            if (next != null) {
                followUps.add(new Due(f.endNanos + (long) (next.delayMs() / config.speedup() * 1e6), next.request()));
            }
        }
    }

    /** Waits for every in-flight request; after a stop, cancels what is left after {@code drainWait}. */
    private void drain() {
        long abortAt = -1;
        boolean aborted = false;
        while (!inFlight.isEmpty()) {
            long now = System.nanoTime();
            if (stopRequested && abortAt < 0) {
                abortAt = now + config.drainWait().toNanos();
            }
            if (!aborted && abortAt >= 0 && now >= abortAt) {
                aborted = true;
                List<StreamRecorder> left = new ArrayList<>(inFlight);
                lock.unlock();
                try {
                    left.forEach(StreamRecorder::abort);
                } finally {
                    lock.lock();
                }
                continue;
            }
            await(abortAt >= 0 && !aborted ? abortAt - now : TimeUnit.SECONDS.toNanos(1));
        }
        finished.clear();
    }

    private void await(long nanos) {
        try {
            changed.awaitNanos(Math.max(1, nanos));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopRequested = true;
        }
    }

    private void signal() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private record Finished(PlannedRequest request, Completion completion, long endNanos) {
    }

    private record Due(long dueNanos, PlannedRequest request) implements Comparable<Due> {
        @Override
        public int compareTo(Due o) {
            return Long.compare(dueNanos, o.dueNanos);
        }
    }
}
