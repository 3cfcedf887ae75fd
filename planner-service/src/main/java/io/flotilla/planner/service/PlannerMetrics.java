package io.flotilla.planner.service;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.leader.Leadership;
import io.flotilla.planner.plan.ScalingDecision;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Prometheus names: {@code flotilla_planner_predicted_requests_per_second},
 * {@code flotilla_planner_prediction_error{series}}, {@code flotilla_planner_prediction_shortfall},
 * {@code flotilla_planner_target_replicas{pool}},
 * {@code flotilla_planner_ready_replicas{pool}}, {@code flotilla_planner_decisions_total{applied}},
 * {@code flotilla_planner_correction_factor{latency}}, {@code flotilla_planner_ready_time_seconds},
 * {@code flotilla_planner_period_seconds}, {@code flotilla_planner_break_even_seconds{pool}},
 * {@code flotilla_planner_rise_reserve_requests_per_second}, {@code flotilla_planner_leader}; the
 * observation feed adds {@code flotilla_planner_gateway_queued}, the kubernetes connector
 * {@code flotilla_planner_whole_groups{pool}} and {@code flotilla_planner_partial_groups_total{pool}}.
 */
public final class PlannerMetrics {

    private final AtomicReference<DecisionRecord> last = new AtomicReference<>();
    private final AtomicReference<double[]> errors = new AtomicReference<>(new double[4]);
    private final AtomicReference<double[]> corrections = new AtomicReference<>(new double[] {1, 1});
    private final AtomicReference<Double> readyTime = new AtomicReference<>(Double.NaN);
    private final AtomicReference<Double> period = new AtomicReference<>(Double.NaN);
    private final AtomicReference<Map<Pool, Duration>> breakEven = new AtomicReference<>(Map.of());
    private final Counter applied;
    private final Counter notApplied;

    /** A sole planner: {@code flotilla_planner_leader} is 1. */
    public PlannerMetrics(MeterRegistry registry) {
        this(registry, Leadership.SOLE);
    }

    public PlannerMetrics(MeterRegistry registry, Leadership leadership) {
        Gauge.builder("flotilla.planner.leader", leadership, l -> l.leads() ? 1 : 0)
                .description("1 while this planner replica leads (applies its targets), 0 while it follows (decides only)")
                .register(registry);
        Gauge.builder("flotilla.planner.predicted_requests_per_second", last,
                        r -> r.get() == null ? Double.NaN : r.get().decision().predicted().rate())
                .description("Request rate forecast for the next interval").register(registry);
        String[] series = {"request_rate", "isl", "osl"};
        for (int i = 0; i < series.length; i++) {
            int k = i;
            Gauge.builder("flotilla.planner.prediction_error", errors, e -> e.get()[k])
                    .description("sMAPE of the one-interval-ahead forecasts over the error window").tag("series", series[i])
                    .register(registry);
        }
        Gauge.builder("flotilla.planner.prediction_shortfall", errors, e -> e.get()[3])
                .description("Mean under-forecast of the request rate over the error window; above the conservative "
                        + "threshold no pool scales down").register(registry);
        for (Pool p : Pool.values()) {
            Gauge.builder("flotilla.planner.target_replicas", last,
                            r -> r.get() == null || !r.get().targets().has(p) ? Double.NaN : r.get().targets().get(p))
                    .description("Replicas the planner wants in the pool").tag("pool", p.label()).register(registry);
            Gauge.builder("flotilla.planner.ready_replicas", last, r -> r.get() == null ? Double.NaN : r.get().ready().get(p))
                    .description("READY workers of the pool in membership").tag("pool", p.label()).register(registry);
        }
        String[] latency = {"ttft", "itl"};
        for (int i = 0; i < latency.length; i++) {
            int k = i;
            Gauge.builder("flotilla.planner.correction_factor", corrections, c -> c.get()[k])
                    .description("Observed / expected latency, bounded").tag("latency", latency[i]).register(registry);
        }
        Gauge.builder("flotilla.planner.ready_time", readyTime, AtomicReference::get).baseUnit("seconds")
                .description("Cold start the planner sizes ahead for: measured from its scale-ups, or the configured ready time")
                .register(registry);
        Gauge.builder("flotilla.planner.period", period, AtomicReference::get).baseUnit("seconds")
                .description("Period found in the request rate (NaN: none)").register(registry);
        for (Pool p : Pool.values()) {
            Gauge.builder("flotilla.planner.break_even", breakEven,
                            b -> b.get().containsKey(p) ? b.get().get(p).toMillis() / 1000.0 : Double.NaN).baseUnit("seconds")
                    .description("How long an unneeded replica of the pool is kept before it is released (the cold start it "
                            + "would cost to start again)").tag("pool", p.label()).register(registry);
        }
        Gauge.builder("flotilla.planner.rise_reserve_requests_per_second", last,
                        r -> r.get() == null ? Double.NaN : r.get().decision().riseReserve())
                .description("Fastest rise of the request rate within one cold start remembered (scaling.rise-memory, or "
                        + "scaling.rise-memory-cold-starts cold starts): "
                        + "replicas for it are kept when the forecasts fall, at most scaling.rise-replicas per pool").register(registry);
        applied = Counter.builder("flotilla.planner.decisions").description("Planner decisions, by whether a connector applied them")
                .tag("applied", "true").register(registry);
        notApplied = Counter.builder("flotilla.planner.decisions").description("Planner decisions, by whether a connector applied them")
                .tag("applied", "false").register(registry);
    }

    void decided(DecisionRecord r) {
        ScalingDecision d = r.decision();
        last.set(r);
        readyTime.set(d.readyTime().toMillis() / 1000.0);
        period.set(d.period().map(p -> p.toMillis() / 1000.0).orElse(Double.NaN));
        breakEven.set(d.breakEven());
        errors.set(new double[] {d.rateError(), d.islError(), d.oslError(), d.rateShortfall()});
        corrections.set(new double[] {d.ttftCorrection(), d.itlCorrection()});
        (r.applied() != null ? applied : notApplied).increment();
    }
}
