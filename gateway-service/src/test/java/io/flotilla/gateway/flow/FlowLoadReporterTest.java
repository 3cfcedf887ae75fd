package io.flotilla.gateway.flow;

import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.GatewayModelLoad;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** What a gateway tells the planner about its queue: per model, queued and dispatched, and failures counted. */
class FlowLoadReporterTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-02T00:00:00Z"), ZoneOffset.UTC);

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    private final List<Disposable> subscriptions = new ArrayList<>();
    private final FlowController flow = new FlowController(m -> new FlowLimits(2, 10, 2, Duration.ofSeconds(30)), time,
            new FlowMetrics(new SimpleMeterRegistry(), t -> t), 100, t -> 1, Duration.ofMillis(500));

    @AfterEach
    void disposeTime() {
        subscriptions.forEach(Disposable::dispose);
        time.dispose();
    }

    private AtomicReference<FlowSlot> admit(String id, String model) {
        AtomicReference<FlowSlot> slot = new AtomicReference<>();
        FlowRequest r = new FlowRequest(id, model, Priority.STANDARD, "tenant", 10, flow.nowNanos() + Duration.ofSeconds(30).toNanos());
        subscriptions.add(flow.admit(r, false).subscribe(slot::set));
        return slot;
    }

    private static GatewayModelLoad of(GatewayLoad load, String model) {
        return load.getModelsList().stream().filter(m -> m.getModel().equals(model)).findFirst().orElseThrow();
    }

    @Test
    void aReportCarriesEachModelsQueueAndDispatchedRequests() {
        List<GatewayLoad> sent = new CopyOnWriteArrayList<>();
        FlowLoadReporter reporter = new FlowLoadReporter("gw-1", flow, (load, onError) -> sent.add(load), Duration.ofSeconds(1), CLOCK);
        List<AtomicReference<FlowSlot>> slots = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            slots.add(admit("r" + i, "big"));     // 2 dispatched (the limit), 3 wait
        }
        admit("s0", "small");

        reporter.report();
        GatewayLoad load = sent.get(0);
        assertThat(load.getGatewayId()).isEqualTo("gw-1");
        assertThat(load.getTs()).isEqualTo(CLOCK.millis());
        assertThat(load.getIntervalMs()).isEqualTo(1000);
        assertThat(of(load, "big").getQueued()).isEqualTo(3);
        assertThat(of(load, "big").getInFlight()).isEqualTo(2);
        assertThat(of(load, "small").getQueued()).isZero();
        assertThat(of(load, "small").getInFlight()).isEqualTo(1);

        slots.get(0).get().release(); // a finished request lets one waiter through
        reporter.report();
        assertThat(of(sent.get(1), "big").getQueued()).isEqualTo(2);
        assertThat(of(sent.get(1), "big").getInFlight()).isEqualTo(2);
        assertThat(reporter.sent()).isEqualTo(2);
        assertThat(reporter.failed()).isZero();
    }

    @Test
    void undeliveredAndThrowingSinksAreCountedAndNeverEndTheReports() {
        List<Runnable> failures = new ArrayList<>();
        FlowLoadReporter failing = new FlowLoadReporter("gw-1", flow, (load, onError) -> failures.add(onError),
                Duration.ofSeconds(1), CLOCK);
        failing.report();
        failures.forEach(Runnable::run); // Kafka gave up on it later
        assertThat(failing.failed()).isEqualTo(1);

        FlowLoadReporter throwing = new FlowLoadReporter("gw-1", flow, (load, onError) -> {
            throw new IllegalStateException("producer closed");
        }, Duration.ofSeconds(1), CLOCK);
        throwing.report();
        throwing.report();
        assertThat(throwing.failed()).isEqualTo(2);
        assertThat(throwing.sent()).isZero();
    }

    @Test
    void startedItReportsEveryIntervalUntilClosedAndAnIntervalOfZeroNeverStarts() {
        List<GatewayLoad> sent = new CopyOnWriteArrayList<>();
        FlowLoadReporter reporter = new FlowLoadReporter("gw-1", flow, (load, onError) -> sent.add(load),
                Duration.ofMillis(10), CLOCK).start();
        await().atMost(Duration.ofSeconds(30)).until(() -> sent.size() >= 3);
        assertThat(reporter.running()).isTrue();
        reporter.close();
        assertThat(reporter.running()).isFalse();

        try (FlowLoadReporter off = new FlowLoadReporter("gw-1", flow, (load, onError) -> sent.add(load), Duration.ZERO, CLOCK)) {
            assertThat(off.start().running()).isFalse();
        }
        assertThatThrownBy(() -> new FlowLoadReporter("gw-1", flow, (load, onError) -> { }, Duration.ofSeconds(-1), CLOCK))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
