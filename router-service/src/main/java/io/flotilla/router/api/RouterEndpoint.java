package io.flotilla.router.api;

import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.router.core.ActiveLoad;
import io.flotilla.router.core.WorkerView;
import io.flotilla.router.service.RouterEngine;
import io.flotilla.router.service.RouterMetrics;
import io.flotilla.router.core.Strategy;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code GET /actuator/router}: mode, workers in membership and decision counts.
 * {@code POST /actuator/router} with {@code {"mode": "round-robin"}}: switch the mode at run time.
 */
@Endpoint(id = "router")
public class RouterEndpoint {

    private final RouterEngine engine;
    private final RouterMetrics metrics;
    private final double busyPrefillFraction;
    private final double busyDecodeFraction;

    public RouterEndpoint(RouterEngine engine, RouterMetrics metrics, double busyPrefillFraction, double busyDecodeFraction) {
        this.engine = engine;
        this.metrics = metrics;
        this.busyPrefillFraction = busyPrefillFraction;
        this.busyDecodeFraction = busyDecodeFraction;
    }

    @ReadOperation
    public Map<String, Object> router() {
        Map<String, ActiveLoad> booked = engine.ledger().sequences().loads();
        List<Map<String, Object>> workers = new ArrayList<>();
        for (WorkerView w : engine.directory().views()) {
            ActiveLoad a = booked.getOrDefault(w.id(), ActiveLoad.NONE);
            long prefill = Math.max(a.prefillTokens(), w.load().waitingPrefillTokens());
            long blocks = Math.max(a.decodeBlocks(), w.load().activeKvBlocks());
            boolean busy = w.totalKvBlocks() > 0
                    && ((busyPrefillFraction > 0 && prefill > busyPrefillFraction * w.totalKvBlocks() * w.blockSize())
                    || (busyDecodeFraction > 0 && blocks > busyDecodeFraction * w.totalKvBlocks()));
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", w.id());
            m.put("role", w.role().name().replace("WORKER_ROLE_", "").toLowerCase(Locale.ROOT));
            m.put("state", stateOf(w));
            m.put("model", w.model());
            m.put("endpoint", w.endpoint());
            m.put("active_prefill_tokens", prefill);
            m.put("active_blocks", blocks);
            m.put("running", w.load().running());
            m.put("waiting", w.load().waiting());
            m.put("busy", busy);
            workers.add(m);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", engine.mode().configName());
        out.put("router_id", engine.routerId());
        out.put("membership_feed_healthy", engine.directory().feedHealthy());
        out.put("workers", workers);
        out.put("decisions", metrics.decisionCounts());
        out.put("active_sequences", engine.ledger().sequences().size());
        return out;
    }

    @WriteOperation
    public Map<String, Object> setMode(String mode) {
        engine.switchMode(Strategy.parse(mode));
        return Map.of("mode", engine.mode().configName());
    }

    private static String stateOf(WorkerView w) {
        if (w.acceptsRequests()) {
            return "ready";
        }
        if (!w.routable()) {
            return "suspect";
        }
        return w.state() == WorkerState.WORKER_STATE_DRAINING ? "draining"
                : w.state().name().replace("WORKER_STATE_", "").toLowerCase(Locale.ROOT);
    }
}
