package io.flotilla.router.booking;

import io.flotilla.router.core.ActiveLoad;
import io.flotilla.router.core.CostModel;
import io.flotilla.router.core.CostUnit;
import io.flotilla.router.core.LoadMerge;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.RoutingPolicy;
import io.flotilla.router.core.WorkerRanking;
import io.flotilla.router.core.WorkerView;

import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.function.Function;

/**
 * The {@link WorkerRanking} the booking ledger keeps: per (model, block size), the aggregated workers in two
 * skip lists ordered by their load cost in milliseconds and in blocks, re-ranked in O(log n) whenever a
 * worker's view (membership, load report, suspect flag) or its bookings change. Nothing here scans the fleet.
 *
 * <p>Writers are serialised on this object (the ledger's booking changes, the directory's view changes);
 * readers take no lock. A re-rank replaces the worker's entry in {@link #get} first, then moves it in the
 * lists, so a reader skips the old entry and may, for that one decision, not meet the new one.
 */
public final class LoadRanking implements WorkerRanking {

    private record Group(String model, int blockSize) {
    }

    /** One (model, block size): its ranked aggregated workers and how many prefill/decode workers it has. */
    private static final class Lists {
        final ConcurrentSkipListSet<Ranked> byMs = new ConcurrentSkipListSet<>(BY_MS);
        final ConcurrentSkipListSet<Ranked> byBlocks = new ConcurrentSkipListSet<>(BY_BLOCKS);
        final Map<String, Ranked> unpriced = new ConcurrentHashMap<>();
        volatile int disaggregated;
    }

    private static final Comparator<Ranked> BY_MS =
            Comparator.comparingDouble(Ranked::msCost).thenComparing(Ranked::id);
    private static final Comparator<Ranked> BY_BLOCKS =
            Comparator.comparingDouble(Ranked::blocksCost).thenComparing(Ranked::id);

    private final CostModel costModel;
    private final LoadMerge merge;
    private final Map<Group, Lists> groups = new ConcurrentHashMap<>();
    /** Current entry of each ranked (aggregated) worker. */
    private final Map<String, Ranked> ranked = new ConcurrentHashMap<>();
    /** Prefill and decode workers: counted per group, not ranked. Guarded by this. */
    private final Map<String, WorkerView> unranked = new java.util.HashMap<>();

    /** Ranks by the load cost {@code config}'s policy prices (its weights and load merge). */
    public LoadRanking(RouterConfig config) {
        this.costModel = RoutingPolicy.loadCostModel(config);
        this.merge = config.loadMerge();
    }

    /**
     * The worker joined or its view changed; its bookings are read under this ranking's lock, so a booking
     * change re-ranking it at the same time cannot be overtaken by the bookings read before it.
     */
    public synchronized void put(WorkerView view, Function<String, ActiveLoad> booked,
                                 Function<String, ActiveLoad> bookedAtReport) {
        put(view, booked.apply(view.id()), bookedAtReport.apply(view.id()));
    }

    /** The worker joined or its view changed; {@code booked} and {@code bookedAtReport} are its bookings now. */
    public synchronized void put(WorkerView view, ActiveLoad booked, ActiveLoad bookedAtReport) {
        remove(view.id());
        Group g = new Group(view.model(), view.blockSize());
        Lists lists = groups.computeIfAbsent(g, k -> new Lists());
        if (!view.isAggregated()) {
            unranked.put(view.id(), view);
            lists.disaggregated++;
            return;
        }
        boolean priced = WorkerRanking.pricedInMs(view);
        Ranked r = new Ranked(view, booked, bookedAtReport,
                priced ? WorkerRanking.loadCost(costModel, view, booked, bookedAtReport, merge, CostUnit.MILLISECONDS)
                        : Double.NaN,
                WorkerRanking.loadCost(costModel, view, booked, bookedAtReport, merge, CostUnit.BLOCKS),
                WorkerRanking.monotone(view));
        ranked.put(view.id(), r);
        if (priced) {
            lists.byMs.add(r);
        } else {
            lists.unpriced.put(view.id(), r);
        }
        lists.byBlocks.add(r);
    }

    /** The worker's bookings (or their baseline at its last report) changed. */
    public synchronized void loadsChanged(String workerId, ActiveLoad booked, ActiveLoad bookedAtReport) {
        Ranked r = ranked.get(workerId);
        if (r != null && !(r.booked().equals(booked) && r.bookedAtReport().equals(bookedAtReport))) {
            put(r.view(), booked, bookedAtReport);
        }
    }

    /** The worker left (or cannot be routed to at all). */
    public synchronized void remove(String workerId) {
        Ranked r = ranked.remove(workerId);
        if (r != null) {
            Lists lists = groups.get(new Group(r.view().model(), r.view().blockSize()));
            lists.byMs.remove(r);
            lists.byBlocks.remove(r);
            lists.unpriced.remove(workerId);
            return;
        }
        WorkerView other = unranked.remove(workerId);
        if (other != null) {
            groups.get(new Group(other.model(), other.blockSize())).disaggregated--;
        }
    }

    /** Ranked workers. */
    public int size() {
        return ranked.size();
    }

    @Override
    public Ranked get(String workerId) {
        return ranked.get(workerId);
    }

    @Override
    public Iterator<Ranked> ascending(String model, int blockSize, CostUnit unit) {
        Lists lists = groups.get(new Group(model, blockSize));
        if (lists == null) {
            return Collections.emptyIterator();
        }
        return current((unit == CostUnit.MILLISECONDS ? lists.byMs : lists.byBlocks).iterator());
    }

    @Override
    public Collection<Ranked> unpriced(String model, int blockSize) {
        Lists lists = groups.get(new Group(model, blockSize));
        return lists == null ? java.util.List.of() : lists.unpriced.values();
    }

    @Override
    public boolean disaggregated(String model, int blockSize) {
        Lists lists = groups.get(new Group(model, blockSize));
        return lists != null && lists.disaggregated > 0;
    }

    /** Skips entries replaced since the iterator passed their place. */
    private Iterator<Ranked> current(Iterator<Ranked> all) {
        return new Iterator<>() {
            private Ranked next = advance();

            private Ranked advance() {
                while (all.hasNext()) {
                    Ranked r = all.next();
                    if (ranked.get(r.id()) == r) {
                        return r;
                    }
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public Ranked next() {
                if (next == null) {
                    throw new NoSuchElementException();
                }
                Ranked r = next;
                next = advance();
                return r;
            }
        };
    }
}
