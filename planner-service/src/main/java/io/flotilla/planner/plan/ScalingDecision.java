package io.flotilla.planner.plan;

import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.predict.PeriodDetector;
import io.flotilla.protocol.v1.PlannerDecision;
import io.flotilla.protocol.v1.PoolObservation;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * One planning interval's decision, everything the loop applies and publishes: {@link Planner#plan}
 * returns it and changes nothing outside the planner; the loop hands {@link #targets} to a connector,
 * then publishes the decision with what was applied ({@link #toProto}).
 *
 * @param at               when it was decided (the end of the interval observed)
 * @param model            the model whose pools it sizes
 * @param observed         the interval observed
 * @param predicted        the demand forecast for the next interval
 * @param targets          the replicas wanted per managed pool
 * @param readyTime        the cold start it sized ahead for
 * @param readyTimeMeasured whether that cold start was measured from the planner's own scale-ups
 * @param breakEven        per pool, how long an unneeded replica is kept before it is released (no period)
 * @param period           the period of the request rate, when one was found, as a duration
 * @param periodCorrelation the autocorrelation at that period (NaN without one)
 * @param rateError        sMAPE of the request-rate forecast
 * @param rateShortfall    how far the rate forecasts ran below what came (the conservative-mode measure)
 * @param riseReserve      the fastest rise of the request rate within one cold start remembered, req/s: the
 *                         rise reserve's measure (0: none)
 * @param islError         sMAPE of the ISL forecast
 * @param oslError         sMAPE of the OSL forecast
 * @param conservative     whether scale-down was blocked because the forecasts ran short
 * @param ttftCorrection   observed / expected TTFT, bounded
 * @param itlCorrection    observed / expected ITL, bounded
 * @param reason           why, in words
 */
public record ScalingDecision(Instant at, String model, Observation observed, Demand predicted, PoolCounts targets,
                              Duration readyTime, boolean readyTimeMeasured, Map<Pool, Duration> breakEven,
                              Optional<Duration> period, double periodCorrelation, double rateError, double rateShortfall,
                              double riseReserve, double islError, double oslError, boolean conservative,
                              double ttftCorrection, double itlCorrection, String reason) {

    public ScalingDecision {
        breakEven = Map.copyOf(breakEven);
    }

    static Optional<Duration> period(Optional<PeriodDetector.Period> p, Duration interval) {
        return p.map(x -> interval.multipliedBy(x.lag()));
    }

    /** The contract's record of it ({@code flotilla.planner-decisions}), with the connector and what it applied (null: nothing). */
    public PlannerDecision toProto(String connector, PoolCounts applied) {
        PlannerDecision.Builder b = PlannerDecision.newBuilder()
                .setTs(at.toEpochMilli())
                .setModel(model)
                .setObserved(observed.toProto())
                .setPredicted(PoolObservation.newBuilder().setRequestRate(predicted.rate()).setMeanIsl(finite(predicted.isl()))
                        .setMeanOsl(finite(predicted.osl())).build())
                .setTargets(targets.toProto())
                .setReason(reason)
                .setConnector(connector);
        if (applied != null) {
            b.setApplied(applied.toProto());
        }
        return b.build();
    }

    private static double finite(double v) {
        return Double.isFinite(v) ? v : 0;
    }
}
