package io.flotilla.router.api;

import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.router.core.ActiveLoad;
import io.flotilla.router.core.BusyDetector;
import io.flotilla.router.core.Candidate;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.RoutingRequest;
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
    private final RouterConfig config;
    private final BusyDetector busy;

    public RouterEndpoint(RouterEngine engine, RouterMetrics metrics, RouterConfig config) {
        this.engine = engine;
        this.metrics = metrics;
        this.config = config;
        this.busy = new BusyDetector(config.busy());
    }

    @ReadOperation
    public Map<String, Object> router() {
        Map<String, ActiveLoad> booked = engine.ledger().sequences().loads();
        Map<String, ActiveLoad> atReport = engine.ledger().sequences().loadsAtReport();
        List<Map<String, Object>> workers = new ArrayList<>();
        for (WorkerView w : engine.directory().views()) {
            // The same merge of report and bookings, and the same thresholds, as routing decisions use.
            RoutingRequest probe = new RoutingRequest("status", w.model(), 0, w.blockSize(), null, null, false, 0);
            Candidate c = Candidate.of(probe, w, 0, booked.getOrDefault(w.id(), ActiveLoad.NONE),
                    atReport.getOrDefault(w.id(), ActiveLoad.NONE), config.loadMerge());
            long prefill = c.queuedPrefillTokens();
            long blocks = c.decodeBlocks();
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
            m.put("busy", busy.isBusy(c));
            if (w.tiers().bytesPerBlock() > 0) {
                Map<String, Object> tiers = new LinkedHashMap<>();
                tiers.put("bytes_per_block", w.tiers().bytesPerBlock());
                tiers.put("host_bytes_per_second", w.tiers().hostBytesPerSecond());
                tiers.put("disk_bytes_per_second", w.tiers().diskBytesPerSecond());
                m.put("kv_tiers", tiers);
            }
            workers.add(m);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", engine.mode().configName());
        out.put("router_id", engine.routerId());
        out.put("membership_feed_healthy", engine.directory().feedHealthy());
        out.put("workers", workers);
        out.put("decisions", metrics.decisionCounts());
        out.put("active_sequences", engine.ledger().sequences().size());
        Map<String, Object> indexer = new LinkedHashMap<>();
        indexer.put("breaker", engine.indexer().breakerState().name().toLowerCase(Locale.ROOT));
        indexer.put("errors", engine.indexer().errors());
        out.put("indexer", indexer);
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
