package io.flotilla.router.core;

import io.flotilla.router.booking.BookingLedger;
import io.flotilla.router.booking.SequenceChange;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiFunction;

/**
 * A deterministic discrete-event simulation of the request path: simulated clock (milliseconds),
 * {@link SimWorker}s with the engine timing model, router replicas ({@link RoutingPolicy} or any
 * other decider + {@link BookingLedger}), a router-sync bus that can be switched off, periodic load
 * reports, and an indexer that answers from what each worker really cached. No threads, no sleeps.
 */
final class SimCluster {

    static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");

    /** One request as offered: when, what, through which router replica. */
    record Arrival(long atMs, RoutingRequest request, int replica) {
    }

    /** What happened to one request. */
    record Outcome(Arrival arrival, Decision decision, String worker, int cachedTokens, long firstTokenMs, long doneMs) {
        long ttftMs() {
            return firstTokenMs - arrival.atMs();
        }
    }

    /** True in-flight requests per worker, sampled at each arrival before routing it. */
    record Sample(long atMs, Map<String, Integer> inFlight) {
        int spread() {
            return inFlight.values().stream().mapToInt(i -> i).max().orElse(0)
                    - inFlight.values().stream().mapToInt(i -> i).min().orElse(0);
        }
    }

    private record Event(long at, long seq, Runnable action) {
    }

    private final PriorityQueue<Event> events = new PriorityQueue<>((a, b) ->
            a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private long seq;
    private long now;

    final Map<String, SimWorker> workers = new TreeMap<>();
    final Map<String, WorkerView> membership = new TreeMap<>();
    final List<Replica> replicas = new ArrayList<>();
    final List<Outcome> outcomes = new ArrayList<>();
    final List<Sample> samples = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    boolean shareSync = true;
    boolean indexerUp = true;
    long syncDelayMs = 5;
    long reportIntervalMs = 250;
    int echoesIgnored;

    long now() {
        return now;
    }

    Instant instant() {
        return T0.plusMillis(now);
    }

    void at(long atMs, Runnable action) {
        events.add(new Event(Math.max(atMs, now), seq++, action));
    }

    SimWorker addWorker(String id, WorkerTiming timing, int capacityBlocks) {
        SimWorker w = new SimWorker(this, id, timing, capacityBlocks);
        workers.put(id, w);
        membership.put(id, new WorkerView(id, WorkerView.Role.AGGREGATED, Fixtures.MODEL, Fixtures.BS, "",
                id + ":7100", WorkerView.State.READY, true, Optional.of(timing), capacityBlocks,
                LoadReport.NONE));
        return w;
    }

    Replica addReplica(String id, BiFunction<RoutingRequest, ClusterSnapshot, Decision> decider, Collection<Signal> requires) {
        Replica r = new Replica(id, decider, EnumSet.copyOf(requires),
                BookingLedger.create(id, RouterDefaults.config()));
        replicas.add(r);
        return r;
    }

    Replica addReplica(String id, RoutingPolicy policy) {
        return addReplica(id, policy::decide, policy.requires().isEmpty() ? List.of(Signal.LOAD) : policy.requires());
    }

    /** Runs every arrival to completion (and stops load reports once the last request is done). */
    void run(List<Arrival> arrivals) {
        for (Arrival a : arrivals) {
            at(a.atMs(), () -> arrive(a));
        }
        int[] pending = {arrivals.size()};
        scheduleReports(pending);
        while (!events.isEmpty()) {
            Event e = events.poll();
            now = e.at;
            e.action.run();
            pending[0] = arrivals.size() - outcomes.size();
        }
    }

    private void scheduleReports(int[] pending) {
        at(now + reportIntervalMs, () -> {
            for (SimWorker w : workers.values()) {
                membership.computeIfPresent(w.id, (id, v) -> v.withLoad(w.report()));
                for (Replica r : replicas) {
                    r.ledger.loadReported(w.id);
                }
            }
            if (pending[0] > 0) {
                scheduleReports(pending);
            }
        });
    }

    private void arrive(Arrival a) {
        Map<String, Integer> inFlight = new TreeMap<>();
        workers.forEach((id, w) -> {
            if (membership.get(id).acceptsRequests()) {
                inFlight.put(id, w.inFlight());
            }
        });
        samples.add(new Sample(now, inFlight));
        Replica replica = replicas.get(a.replica() % replicas.size());
        Decision d = replica.route(a.request());
        if (!d.routed()) {
            outcomes.add(new Outcome(a, d, "", 0, now, now));
            return;
        }
        WorkerView chosen = membership.get(d.workerId());
        if (chosen == null || !FilterChain.STANDARD.admits(a.request(), chosen)) {
            violations.add("t=" + now + " " + a.request().requestId() + " routed to ineligible " + d.workerId());
        }
        workers.get(d.workerId()).accept(new SimWorker.Job(a, d, replica));
    }

    void finished(Outcome o) {
        outcomes.add(o);
    }

    /** The indexer: leading blocks of the request each worker really holds. */
    Map<String, Integer> indexerMatches(RoutingRequest r) {
        Map<String, Integer> out = new HashMap<>();
        workers.forEach((id, w) -> {
            int m = w.leadingMatch(r.seqHashes());
            if (m > 0) {
                out.put(id, m);
            }
        });
        return out;
    }

    void setRoutable(String workerId, boolean routable) {
        membership.computeIfPresent(workerId, (id, v) -> v.withRoutable(routable));
    }

    void replaceView(WorkerView view) {
        membership.put(view.id(), view);
    }

    /** One router replica: decides, books, publishes its changes on the sync bus. */
    final class Replica {
        final String id;
        final BiFunction<RoutingRequest, ClusterSnapshot, Decision> decider;
        final Set<Signal> requires;
        final BookingLedger ledger;

        Replica(String id, BiFunction<RoutingRequest, ClusterSnapshot, Decision> decider, Set<Signal> requires,
                BookingLedger ledger) {
            this.id = id;
            this.decider = decider;
            this.requires = requires;
            this.ledger = ledger;
        }

        Decision route(RoutingRequest r) {
            Map<String, Integer> matches = indexerUp && requires.contains(Signal.KV_OVERLAP) ? indexerMatches(r) : null;
            membership.values().forEach(v -> ledger.workerChanged(v.id(), v)); // as the router's directory tells it
            ClusterSnapshot s = ledger.snapshot(List.copyOf(membership.values()), r, requires, matches, instant());
            Decision d = decider.apply(r, s);
            ledger.book(r, d, instant()).ifPresent(this::publish);
            return d;
        }

        void prefillDone(String requestId) {
            publish(ledger.prefillDone(requestId, instant()));
        }

        void release(String requestId) {
            publish(ledger.release(requestId, instant()));
            ledger.expire(instant());
        }

        private void publish(SequenceChange change) {
            for (Replica other : replicas) {
                if (other == this || shareSync) {
                    at(now + syncDelayMs, () -> {
                        boolean applied = other.ledger.applyRemote(change, instant());
                        if (other == this && !applied) {
                            echoesIgnored++;
                        }
                    });
                }
            }
        }
    }
}
