package io.flotilla.router.core;

import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

/**
 * The aggregated workers of each (model, block size) in ascending order of their load cost, kept up to
 * date as load reports, membership and bookings change (the booking ledger's {@code LoadRanking}), so a
 * pruned decision reads the least-loaded workers without a scan of the fleet. Read without locks: a
 * reader racing a change may miss a worker that is being re-ranked for one decision (a worse route, never
 * an ineligible one), and skips entries that are no longer current.
 *
 * <p>The load cost of a worker is {@link #loadCost}: the aggregated cost model's price of an empty request
 * (no prompt, no output, base model) on that worker — every term of the cost that does not depend on the
 * request, with the same weights, load merge and unit as a decision. A worker without timing or capacity
 * has no cost in milliseconds: it is ranked in blocks only, and listed in {@link #unpriced}.
 */
public interface WorkerRanking {

    /** Nothing ranked: every decision scans. */
    WorkerRanking NONE = new WorkerRanking() {
        @Override
        public Ranked get(String workerId) {
            return null;
        }

        @Override
        public Iterator<Ranked> ascending(String model, int blockSize, CostUnit unit) {
            return Collections.emptyIterator();
        }

        @Override
        public Collection<Ranked> unpriced(String model, int blockSize) {
            return List.of();
        }

        @Override
        public boolean disaggregated(String model, int blockSize) {
            return false;
        }

        @Override
        public boolean ranks() {
            return false;
        }
    };

    /**
     * One worker as ranked: the view, bookings and report baseline its costs were computed from.
     *
     * @param msCost     {@link #loadCost} in milliseconds; NaN when the worker cannot be priced in them
     * @param blocksCost {@link #loadCost} in blocks
     * @param monotone   its timing when prefill_ms and decode_ms never fall as their argument grows
     *                   ({@link #monotone}), else null: a holder's cost is bounded below only then
     */
    record Ranked(WorkerView view, ActiveLoad booked, ActiveLoad bookedAtReport, double msCost, double blocksCost,
                  WorkerTiming monotone) {

        public String id() {
            return view.id();
        }

        public double cost(CostUnit unit) {
            return unit == CostUnit.MILLISECONDS ? msCost : blocksCost;
        }
    }

    /** The current entry of {@code workerId}, or null when it is not ranked (gone, or not aggregated). */
    Ranked get(String workerId);

    /**
     * The aggregated workers of ({@code model}, {@code blockSize}) from the least loaded up, by their load
     * cost in {@code unit} (ties by id); in milliseconds only those priced in them. Entries that went stale
     * while iterating are skipped.
     */
    Iterator<Ranked> ascending(String model, int blockSize, CostUnit unit);

    /** The aggregated workers of ({@code model}, {@code blockSize}) without timing or capacity. */
    Collection<Ranked> unpriced(String model, int blockSize);

    /** Whether ({@code model}, {@code blockSize}) has prefill or decode workers (ranked pools are aggregated). */
    boolean disaggregated(String model, int blockSize);

    /** False for {@link #NONE}. */
    default boolean ranks() {
        return true;
    }

    /**
     * The load cost of {@code worker} in {@code unit}: {@code model}'s cost of an empty base-model request
     * there, with the worker's report merged with its bookings as a decision merges them. It is the part of
     * every request's cost on this worker that does not depend on the request; what a request adds to it is
     * {@code δ} in {@link CandidateSet}.
     */
    static double loadCost(CostModel model, WorkerView worker, ActiveLoad booked, ActiveLoad bookedAtReport,
                           LoadMerge merge, CostUnit unit) {
        RoutingRequest empty = RoutingRequest.probe(worker.model(), worker.blockSize());
        Candidate c = Candidate.of(empty, worker, KvOverlap.NONE, booked, bookedAtReport, merge);
        return model.costs(empty, unit, List.of(c))[0];
    }

    /**
     * {@code worker}'s timing when both polynomials are non-decreasing where they are used: prefill a, b ≥ 0
     * (tokens ≥ 0), decode d1 ≥ 0 and d1 + 2·d2 ≥ 0 (usage in [0, 1]); else null.
     */
    static WorkerTiming monotone(WorkerView worker) {
        WorkerTiming t = worker.timing().orElse(null);
        return t != null && t.prefillA() >= 0 && t.prefillB() >= 0 && t.decodeD1() >= 0
                && t.decodeD1() + 2 * t.decodeD2() >= 0 ? t : null;
    }

    /** Whether {@code worker} can be priced in milliseconds (see {@link CostUnit#of}). */
    static boolean pricedInMs(WorkerView worker) {
        return worker.timing().isPresent() && worker.totalKvBlocks() > 0;
    }
}
