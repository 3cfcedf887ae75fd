package io.flotilla.gateway.flow;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * Flow-control meters, tagged {@code model}, {@code band} and {@code tenant}:
 * <ul>
 *   <li>{@code flotilla_gateway_inflight{model}} — dispatched requests not finished yet</li>
 *   <li>{@code flotilla_gateway_flow_queued} — requests waiting now</li>
 *   <li>{@code flotilla_gateway_flow_wait_seconds} — queue wait of dispatched requests (percentile histogram)</li>
 *   <li>{@code flotilla_gateway_flow_requests_total{result}} — {@code dispatched}, {@code expired},
 *       {@code displaced}, {@code rejected} (queue full), {@code cancelled} (client left while queued)</li>
 * </ul>
 * The tenant tag is the flow id only for flows named in configuration ({@code flow.tenants}); every
 * other flow is {@code other}, so the tag's values stay bounded whatever callers send.
 */
public final class FlowMetrics {

    public static final String OTHER = "other";

    private final MeterRegistry registry;
    private final UnaryOperator<String> tenantLabel;
    private final Map<String, AtomicInteger> queued = new ConcurrentHashMap<>();

    /** @param tenantLabel the tag value of a flow id: itself when configured, else {@link #OTHER} */
    public FlowMetrics(MeterRegistry registry, UnaryOperator<String> tenantLabel) {
        this.registry = registry;
        this.tenantLabel = tenantLabel;
    }

    /** {@code flotilla_gateway_inflight{model}}: dispatched requests not finished yet. */
    void inFlightGauge(String model, java.util.function.IntSupplier inFlight) {
        Gauge.builder("flotilla.gateway.inflight", inFlight, s -> s.getAsInt())
                .description("Dispatched requests not finished yet")
                .tag("model", model).register(registry);
    }

    void enqueued(String model, FlowRequest r) {
        queued(model, r).incrementAndGet();
    }

    void dequeued(String model, FlowRequest r) {
        queued(model, r).decrementAndGet();
    }

    void dispatched(String model, FlowRequest r, Duration waited) {
        count(model, r, "dispatched");
        Timer.builder("flotilla.gateway.flow.wait")
                .description("Time a dispatched request waited in its model's queue")
                .tags("model", model, "band", r.priority().label(), "tenant", tenantLabel.apply(r.flow()))
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(10))
                .register(registry).record(waited);
    }

    void expired(String model, FlowRequest r) {
        count(model, r, "expired");
    }

    void displaced(String model, FlowRequest r) {
        count(model, r, "displaced");
    }

    void rejected(String model, FlowRequest r) {
        count(model, r, "rejected");
    }

    void cancelled(String model, FlowRequest r) {
        count(model, r, "cancelled");
    }

    private void count(String model, FlowRequest r, String result) {
        Counter.builder("flotilla.gateway.flow.requests")
                .description("Requests leaving flow control, by result")
                .tags("model", model, "band", r.priority().label(), "tenant", tenantLabel.apply(r.flow()), "result", result)
                .register(registry).increment();
    }

    private AtomicInteger queued(String model, FlowRequest r) {
        String tenant = tenantLabel.apply(r.flow());
        return queued.computeIfAbsent(model + '\0' + r.priority().label() + '\0' + tenant, k -> {
            AtomicInteger n = new AtomicInteger();
            Gauge.builder("flotilla.gateway.flow.queued", n, AtomicInteger::get)
                    .description("Requests waiting in flow control")
                    .tags("model", model, "band", r.priority().label(), "tenant", tenant)
                    .register(registry);
            return n;
        });
    }
}
