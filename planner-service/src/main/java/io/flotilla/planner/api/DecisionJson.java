package io.flotilla.planner.api;

import io.flotilla.planner.plan.ScalingDecision;
import io.flotilla.planner.service.DecisionRecord;
import io.flotilla.protocol.v1.PlannerDecision;
import io.flotilla.protocol.v1.PoolObservation;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A decision as JSON: the {@code PlannerDecision} fields under their proto names ({@code targets} and
 * {@code applied} name the managed pools only; {@code applied} is null when nothing was applied),
 * plus {@code ready}, {@code prediction_error}, {@code prediction_shortfall}, {@code rise_reserve} (req/s),
 * {@code conservative},
 * {@code ready_time_s}, {@code break_even_s} (per pool), {@code period_s} and {@code period_correlation}
 * (null without a period).
 */
public final class DecisionJson {

    private DecisionJson() {
    }

    public static Map<String, Object> of(DecisionRecord r) {
        PlannerDecision d = r.published();
        ScalingDecision s = r.decision();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ts", d.getTs());
        m.put("time", Instant.ofEpochMilli(d.getTs()).toString());
        m.put("model", d.getModel());
        m.put("connector", d.getConnector());
        m.put("observed", observation(d.getObserved()));
        m.put("predicted", observation(d.getPredicted()));
        m.put("targets", r.targets().asLabelMap());
        m.put("applied", r.applied() == null ? null : r.applied().asLabelMap());
        m.put("ready", r.ready().asLabelMap());
        m.put("prediction_error", s.rateError());
        m.put("prediction_shortfall", s.rateShortfall());
        m.put("rise_reserve", s.riseReserve());
        m.put("conservative", s.conservative());
        m.put("ready_time_s", seconds(s.readyTime()));
        Map<String, Object> breakEven = new LinkedHashMap<>();
        s.breakEven().forEach((p, b) -> breakEven.put(p.label(), seconds(b)));
        m.put("break_even_s", breakEven);
        m.put("period_s", s.period().map(DecisionJson::seconds).orElse(null));
        m.put("period_correlation", Double.isFinite(s.periodCorrelation()) ? s.periodCorrelation() : null);
        m.put("reason", d.getReason());
        return m;
    }

    private static double seconds(Duration d) {
        return d.toMillis() / 1000.0;
    }

    private static Map<String, Object> observation(PoolObservation o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("request_rate", o.getRequestRate());
        m.put("mean_isl", o.getMeanIsl());
        m.put("mean_osl", o.getMeanOsl());
        m.put("ttft_p90_ms", o.getTtftP90Ms());
        m.put("itl_p90_ms", o.getItlP90Ms());
        m.put("prefill_queue_tokens", o.getPrefillQueueTokens());
        m.put("decode_kv_usage", o.getDecodeKvUsage());
        return m;
    }
}
