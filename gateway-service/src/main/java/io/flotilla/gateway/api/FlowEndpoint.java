package io.flotilla.gateway.api;

import io.flotilla.gateway.client.RouterClient;
import io.flotilla.gateway.flow.FlowController;
import io.flotilla.gateway.routing.CapacityWatch;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code GET /actuator/flow}: every model's queue (per band and flow: waiting, DRR deficit and weight,
 * oldest wait), in-flight and routing counts, limits and saturation signals; the capacity streams;
 * the current Route deadline.
 */
@Endpoint(id = "flow")
final class FlowEndpoint {

    private final FlowController flow;
    private final CapacityWatch watch;
    private final RouterClient router;

    FlowEndpoint(FlowController flow, CapacityWatch watch, RouterClient router) {
        this.flow = flow;
        this.watch = watch;
        this.router = router;
    }

    @ReadOperation
    Map<String, Object> flow() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("models", flow.view());
        m.put("capacity", watch.view());
        m.put("route_deadline_ms", router.routeDeadline().toMillis());
        return m;
    }
}
