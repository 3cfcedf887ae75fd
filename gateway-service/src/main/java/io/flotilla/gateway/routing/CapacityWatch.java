package io.flotilla.gateway.routing;

import io.flotilla.gateway.client.RouterClient;
import io.flotilla.gateway.flow.FlowController;
import io.flotilla.protocol.v1.CapacityUpdate;
import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.WatchCapacityRequest;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.util.retry.Retry;

import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Follows {@code WatchCapacity} on every router replica for as long as the gateway runs: each update
 * refreshes the {@link FleetView} (the fallback's worker set) and tells {@link FlowController} each
 * model's saturation, so queued requests are released the moment capacity returns. A stream that ends
 * or fails is reopened with exponential backoff (200 ms up to 5 s). While no replica's stream is up,
 * flow control is told it has no pushed signal and relies on its own (in-flight count, busy answers,
 * the poll).
 */
public final class CapacityWatch implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CapacityWatch.class);

    private final RouterClient router;
    private final FleetView fleet;
    private final FlowController flow;
    private final String gatewayId;
    private final Disposable.Composite streams = Disposables.composite();
    private final Set<Integer> up = ConcurrentHashMap.newKeySet();
    private final Set<String> models = ConcurrentHashMap.newKeySet();
    private final Map<Integer, CapacityUpdate> last = new ConcurrentHashMap<>();
    private final AtomicInteger updates = new AtomicInteger();

    public CapacityWatch(RouterClient router, FleetView fleet, FlowController flow, String gatewayId) {
        this.router = router;
        this.fleet = fleet;
        this.flow = flow;
        this.gatewayId = gatewayId;
    }

    public CapacityWatch start() {
        WatchCapacityRequest request = WatchCapacityRequest.newBuilder().setGatewayId(gatewayId).build();
        for (int r = 0; r < router.routers(); r++) {
            int replica = r;
            streams.add(router.watchCapacity(replica, request)
                    .doOnNext(u -> updated(replica, u))
                    .doOnError(e -> down(replica, e))
                    .doOnComplete(() -> down(replica, null))
                    .repeat()
                    .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(200)).maxBackoff(Duration.ofSeconds(5)))
                    .subscribe());
        }
        return this;
    }

    private void updated(int replica, CapacityUpdate update) {
        if (up.add(replica)) {
            log.info("capacity stream of router {} is up ({})", replica, update.getRouterId());
        }
        last.put(replica, update);
        updates.incrementAndGet();
        fleet.update(update);
        Set<String> seen = new HashSet<>();
        for (ModelCapacity m : update.getModelsList()) {
            seen.add(m.getModel());
            models.add(m.getModel());
            flow.capacity(m.getModel(), m.getSaturated());
        }
        for (String m : models) {
            if (!seen.contains(m)) {
                flow.capacity(m, false); // no live worker: nothing to wait for; routing answers for it
            }
        }
    }

    private void down(int replica, Throwable error) {
        if (up.remove(replica)) {
            log.warn("capacity stream of router {} ended: {}", replica, error == null ? "completed"
                    : Status.fromThrowable(error).getCode() + " " + error.getMessage());
        }
        last.remove(replica);
        if (up.isEmpty()) {
            for (String m : models) {
                flow.capacity(m, null);
            }
        }
    }

    /** Whether any replica's stream is up. */
    public boolean streaming() {
        return !up.isEmpty();
    }

    /** The streams as {@code GET /actuator/flow} shows them. */
    public Map<String, Object> view() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("streams_up", up.size());
        m.put("routers", router.routers());
        m.put("updates", updates.get());
        Map<String, Object> versions = new LinkedHashMap<>();
        last.forEach((r, u) -> versions.put(Integer.toString(r), Map.of("router_id", u.getRouterId(),
                "version", u.getVersion(), "ts", u.getTs())));
        m.put("last", versions);
        return m;
    }

    @Override
    public void close() {
        streams.dispose();
    }
}
