package io.flotilla.planner.api;

import io.flotilla.planner.service.DecisionRecord;
import io.flotilla.protocol.v1.PlannerDecision;
import io.flotilla.protocol.v1.PoolObservation;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A decision as JSON: the {@code PlannerDecision} fields under their proto names ({@code targets} and
 * {@code applied} name the managed pools only; {@code applied} is null when nothing was applied),
 * plus {@code ready}, {@code prediction_error}, {@code prediction_shortfall} and {@code conservative}.
 */
public final class DecisionJson {

    private DecisionJson() {
    }

    public static Map<String, Object> of(DecisionRecord r) {
        PlannerDecision d = r.decision();
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
        m.put("prediction_error", r.predictionError());
        m.put("prediction_shortfall", r.shortfall());
        m.put("conservative", r.conservative());
        m.put("reason", d.getReason());
        return m;
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
