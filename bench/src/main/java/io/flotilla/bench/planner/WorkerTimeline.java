package io.flotilla.bench.planner;

import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How many workers a cluster ran over time, from its membership records ({@code flotilla.workers}).
 * Each status holds its worker's state from its {@code ts} until the next status of the same process
 * (worker id and epoch); after the last one the state holds until the lease ends
 * ({@code ts + lease_ms}) or the worker's next epoch starts, whichever is first. STOPPED holds nothing.
 * A worker is <em>live</em> in any other state — STARTING, READY, DRAINING, UNHEALTHY — since it holds
 * its accelerator until it stops; <em>ready</em> only while READY. A worker process exists before its
 * first status (JVM start, engine load): {@link #withLaunches} counts that time too, as STARTING, from
 * the process's start time. Pure; times are epoch milliseconds.
 */
public final class WorkerTimeline {

    /** One worker process in one state from {@code fromMs} (inclusive) to {@code toMs} (exclusive). */
    public record Segment(String workerId, long epoch, WorkerState state, long fromMs, long toMs) {

        boolean live() {
            return state != WorkerState.WORKER_STATE_STOPPED;
        }
    }

    private final List<Segment> segments;

    private WorkerTimeline(List<Segment> segments) {
        this.segments = List.copyOf(segments);
    }

    /** Builds the timeline of the workers of {@code model} (every model when null) from statuses in any order. */
    public static WorkerTimeline of(List<WorkerStatus> statuses, String model) {
        Map<String, List<WorkerStatus>> byWorker = new LinkedHashMap<>();
        for (WorkerStatus s : statuses) {
            if (model == null || model.equals(s.getModel())) {
                byWorker.computeIfAbsent(s.getWorkerId(), k -> new ArrayList<>()).add(s);
            }
        }
        List<Segment> out = new ArrayList<>();
        for (List<WorkerStatus> list : byWorker.values()) {
            list.sort(Comparator.comparingLong(WorkerStatus::getTs));
            for (int i = 0; i < list.size(); i++) {
                WorkerStatus s = list.get(i);
                long end = s.getTs() + s.getLeaseMs();
                if (i + 1 < list.size()) {
                    WorkerStatus next = list.get(i + 1);
                    // The same process's next status ends this state; a new process (epoch) ends the old one at the latest.
                    end = next.getEpoch() == s.getEpoch() ? next.getTs() : Math.min(end, next.getTs());
                }
                if (end > s.getTs()) {
                    out.add(new Segment(s.getWorkerId(), s.getEpoch(), s.getState(), s.getTs(), end));
                }
            }
        }
        return new WorkerTimeline(out);
    }

    /**
     * The same timeline with each worker's time from its process launch ({@code launchedAtMs}, by worker
     * id) to the first status after it counted as STARTING.
     */
    public WorkerTimeline withLaunches(Map<String, Long> launchedAtMs) {
        List<Segment> out = new ArrayList<>(segments);
        launchedAtMs.forEach((worker, launched) -> segments.stream()
                .filter(s -> s.workerId().equals(worker) && s.fromMs() >= launched)
                .min(Comparator.comparingLong(Segment::fromMs))
                .filter(first -> first.fromMs() > launched)
                .ifPresent(first -> out.add(new Segment(worker, first.epoch(), WorkerState.WORKER_STATE_STARTING, launched,
                        first.fromMs()))));
        return new WorkerTimeline(out);
    }

    public List<Segment> segments() {
        return segments;
    }

    /** Integral of the number of live workers over [fromMs, toMs), in seconds. */
    public double liveWorkerSeconds(long fromMs, long toMs) {
        return integral(fromMs, toMs, false);
    }

    /** Integral of the number of READY workers over [fromMs, toMs), in seconds. */
    public double readyWorkerSeconds(long fromMs, long toMs) {
        return integral(fromMs, toMs, true);
    }

    private double integral(long fromMs, long toMs, boolean readyOnly) {
        long ms = 0;
        for (Segment s : segments) {
            if (readyOnly ? s.state() == WorkerState.WORKER_STATE_READY : s.live()) {
                ms += Math.max(0, Math.min(toMs, s.toMs()) - Math.max(fromMs, s.fromMs()));
            }
        }
        return ms / 1000.0;
    }

    /** Live workers at {@code atMs} (distinct worker ids). */
    public int liveAt(long atMs) {
        return (int) segments.stream().filter(s -> s.live() && s.fromMs() <= atMs && atMs < s.toMs())
                .map(Segment::workerId).distinct().count();
    }

    /** Live workers sampled every {@code stepMs} from {@code fromMs} while before {@code toMs}. */
    public List<Integer> liveSeries(long fromMs, long toMs, long stepMs) {
        List<Integer> out = new ArrayList<>();
        for (long t = fromMs; t < toMs; t += stepMs) {
            out.add(liveAt(t));
        }
        return out;
    }
}
