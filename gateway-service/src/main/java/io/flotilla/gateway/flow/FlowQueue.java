package io.flotilla.gateway.flow;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * The waiting requests of one model: strict priority between bands; deficit round robin between the
 * flows (API keys or tenants) of a band, by estimated cost; earliest deadline first inside a flow.
 *
 * <p>DRR (Shreedhar and Varghese): the flows of a band that have waiters form a ring; when a flow's
 * turn begins its deficit grows by {@code quantum × weight} tokens, and it dispatches its EDF head
 * while the head's cost fits the deficit; then the turn passes. A flow that empties leaves the ring and
 * forgets its deficit, so idle flows bank nothing. While both flows of a band are backlogged, each
 * receives the same tokens per round (times its weight) whatever its arrival rate.
 *
 * <p>A flow that may not be dispatched now (at its in-flight limit, {@link TenantGate}) is passed
 * over: the round goes on among the others, and a band whose flows are all passed over does not
 * hold back the bands below it.
 *
 * <p>Not thread-safe: owned by one {@link FlowState}, which its driver runs one event at a time.
 */
final class FlowQueue<H> {

    private static final class Flow<H> {
        final String id;
        final long weight;
        final TreeSet<Waiter<H>> waiters = new TreeSet<>(Waiter.EDF);
        long deficit;
        boolean credited;

        Flow(String id, long weight) {
            this.id = id;
            this.weight = weight;
        }
    }

    private static final class Band<H> {
        final Map<String, Flow<H>> flows = new HashMap<>();
        final ArrayDeque<Flow<H>> ring = new ArrayDeque<>();
        int size;
    }

    private final List<Band<H>> bands = new ArrayList<>(Priority.values().length);
    private final long quantum;
    private final ToLongFunction<String> weights;
    private int size;

    /**
     * @param quantum tokens a flow of weight 1 may dispatch per round
     * @param weights weight (≥ 1) of a flow id
     */
    FlowQueue(long quantum, ToLongFunction<String> weights) {
        if (quantum < 1) {
            throw new IllegalArgumentException("quantum must be positive");
        }
        this.quantum = quantum;
        this.weights = weights;
        for (int i = 0; i < Priority.values().length; i++) {
            bands.add(new Band<>());
        }
    }

    int size() {
        return size;
    }

    int size(Priority band) {
        return bands.get(band.ordinal()).size;
    }

    void add(Waiter<H> w) {
        Band<H> band = bands.get(w.request.priority().ordinal());
        Flow<H> flow = band.flows.computeIfAbsent(w.request.flow(), id -> new Flow<>(id, Math.max(1, weights.applyAsLong(id))));
        if (flow.waiters.isEmpty()) {
            band.ring.addLast(flow);
        }
        flow.waiters.add(w);
        band.size++;
        size++;
    }

    /** Removes a waiter (expired, cancelled, displaced); false when it is not queued. */
    boolean remove(Waiter<H> w) {
        Band<H> band = bands.get(w.request.priority().ordinal());
        Flow<H> flow = band.flows.get(w.request.flow());
        if (flow == null || !flow.waiters.remove(w)) {
            return false;
        }
        band.size--;
        size--;
        if (flow.waiters.isEmpty()) {
            leave(band, flow);
        }
        return true;
    }

    /** The next request to dispatch, removed; null when nothing waits. */
    Waiter<H> poll() {
        return poll(null);
    }

    /**
     * The next request of a flow that {@code eligible} accepts (null: every flow), removed; null when
     * none of them waits.
     */
    Waiter<H> poll(Predicate<String> eligible) {
        for (Band<H> band : bands) {
            if (band.size == 0) {
                continue;
            }
            if (eligible == null) {
                return poll(band, null, band.ring.size());
            }
            // One answer per flow for the whole poll: the gate may change its mind meanwhile.
            java.util.Set<String> now = new java.util.HashSet<>();
            for (Flow<H> f : band.ring) {
                if (eligible.test(f.id)) {
                    now.add(f.id);
                }
            }
            if (!now.isEmpty()) {
                return poll(band, now::contains, now.size());
            }
        }
        return null;
    }

    /** DRR among the band's {@code candidates} eligible flows (at least one). */
    private Waiter<H> poll(Band<H> band, Predicate<String> eligible, int candidates) {
        int passed = 0;
        while (true) {
            Flow<H> flow = band.ring.peekFirst();
            if (eligible != null && !eligible.test(flow.id)) {
                band.ring.addLast(band.ring.pollFirst()); // its turn is skipped, its deficit kept
                continue;
            }
            if (!flow.credited) {
                flow.deficit += quantum * flow.weight;
                flow.credited = true;
            }
            Waiter<H> head = flow.waiters.first();
            if (head.request.cost() <= flow.deficit) {
                flow.waiters.pollFirst();
                flow.deficit -= head.request.cost();
                band.size--;
                size--;
                if (flow.waiters.isEmpty()) {
                    leave(band, flow);
                }
                return head;
            }
            flow.credited = false;
            band.ring.addLast(band.ring.pollFirst());
            if (++passed == candidates) {
                skipRounds(band, eligible);
                passed = 0;
            }
        }
    }

    /**
     * Every eligible flow of the band was short of its head's cost for a whole round: grant the rounds
     * that would pass before the first of them fits, at once, instead of looping through them.
     */
    private void skipRounds(Band<H> band, Predicate<String> eligible) {
        long rounds = Long.MAX_VALUE;
        for (Flow<H> f : band.ring) {
            if (eligible != null && !eligible.test(f.id)) {
                continue;
            }
            long perRound = quantum * f.weight;
            long missing = f.waiters.first().request.cost() - f.deficit;
            rounds = Math.min(rounds, (missing + perRound - 1) / perRound - 1);
        }
        if (rounds > 0) {
            for (Flow<H> f : band.ring) {
                if (eligible == null || eligible.test(f.id)) {
                    f.deficit += rounds * quantum * f.weight;
                }
            }
        }
    }

    private static <H> void leave(Band<H> band, Flow<H> flow) {
        band.ring.remove(flow);
        band.flows.remove(flow.id);
    }

    /**
     * The waiter a request of band {@code arriving} may displace from a full queue: in the lowest band
     * below it that has waiters, the one with the latest deadline (latest arrival among equals); null
     * when no lower band has any.
     */
    Waiter<H> displaceable(Priority arriving) {
        for (int b = bands.size() - 1; b > arriving.ordinal(); b--) {
            Waiter<H> latest = null;
            for (Flow<H> f : bands.get(b).flows.values()) {
                Waiter<H> last = f.waiters.last();
                if (latest == null || Waiter.EDF.compare(last, latest) > 0) {
                    latest = last;
                }
            }
            if (latest != null) {
                return latest;
            }
        }
        return null;
    }

    /** Every waiter, for draining at shutdown. */
    List<Waiter<H>> all() {
        List<Waiter<H>> out = new ArrayList<>(size);
        for (Band<H> b : bands) {
            for (Flow<H> f : b.flows.values()) {
                out.addAll(f.waiters);
            }
        }
        return out;
    }

    /** Per band, per flow: waiters, deficit and the oldest enqueue time (for the actuator view). */
    Map<Priority, Map<String, FlowView>> view() {
        Map<Priority, Map<String, FlowView>> out = new LinkedHashMap<>();
        for (Priority p : Priority.values()) {
            Map<String, FlowView> flows = new LinkedHashMap<>();
            for (Flow<H> f : bands.get(p.ordinal()).ring) {
                long oldest = Long.MAX_VALUE;
                for (Waiter<H> w : f.waiters) {
                    oldest = Math.min(oldest, w.enqueuedNanos);
                }
                flows.put(f.id, new FlowView(f.waiters.size(), f.deficit, f.weight, oldest));
            }
            out.put(p, flows);
        }
        return out;
    }

    /** One flow as the actuator shows it. */
    record FlowView(int waiting, long deficit, long weight, long oldestEnqueuedNanos) {
    }
}
