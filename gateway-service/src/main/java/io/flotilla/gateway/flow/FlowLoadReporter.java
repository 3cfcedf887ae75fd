package io.flotilla.gateway.flow;

import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.GatewayModelLoad;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes what this gateway holds per model — requests waiting in flow control and requests
 * dispatched and unfinished — every {@code interval}, as one {@link GatewayLoad} keyed by the gateway's
 * id ({@code flotilla.gateway-load}). It runs on its own thread with a fixed delay: a sink that blocks
 * (Kafka away) delays the next report and never a request, and reports never pile up. An interval of 0
 * never reports.
 *
 * <p>Why: a request waiting here is demand that no worker reports yet. The planner counts arrivals as
 * finished requests plus the growth of the requests in flight; without the gateway's queue, a saturated
 * pool whose overflow waits here reads as the pool's throughput, and the planner under-sizes exactly
 * when the load outgrows it.
 */
public final class FlowLoadReporter implements AutoCloseable {

    /** Where reports go; failures come back through {@code onError}, never as exceptions for I/O trouble. */
    public interface Sink {
        void send(GatewayLoad load, Runnable onError);
    }

    private static final Logger log = LoggerFactory.getLogger(FlowLoadReporter.class);

    private final String gatewayId;
    private final FlowController flow;
    private final Sink sink;
    private final Duration interval;
    private final Clock clock;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private ScheduledExecutorService timer;

    public FlowLoadReporter(String gatewayId, FlowController flow, Sink sink, Duration interval, Clock clock) {
        if (interval.isNegative()) {
            throw new IllegalArgumentException("a load report interval cannot be negative, got " + interval);
        }
        this.gatewayId = gatewayId;
        this.flow = flow;
        this.sink = sink;
        this.interval = interval;
        this.clock = clock;
    }

    /** Every model flow control has seen, with its queue and in-flight count now. */
    public GatewayLoad snapshot() {
        GatewayLoad.Builder b = GatewayLoad.newBuilder().setGatewayId(gatewayId).setTs(clock.millis())
                .setIntervalMs((int) Math.min(Integer.MAX_VALUE, interval.toMillis()));
        for (String model : flow.models()) {
            b.addModels(GatewayModelLoad.newBuilder().setModel(model)
                    .setQueued(flow.queued(model)).setInFlight(flow.inFlight(model)));
        }
        return b.build();
    }

    /** Builds and sends one report now. */
    public void report() {
        try {
            sink.send(snapshot(), this::failedOnce);
            sent.incrementAndGet();
        } catch (RuntimeException e) { // a sink's bug must not end the timer
            failedOnce();
            log.warn("gateway load report failed: {}", e.toString());
        }
    }

    private void failedOnce() {
        long n = failed.incrementAndGet();
        if (Long.bitCount(n) == 1) {
            log.warn("gateway load report not delivered [{} so far]", n);
        }
    }

    public long sent() {
        return sent.get();
    }

    public long failed() {
        return failed.get();
    }

    /** Whether the timer runs (started with an interval above 0, not closed). */
    public synchronized boolean running() {
        return timer != null;
    }

    public synchronized FlowLoadReporter start() {
        if (timer == null && !interval.isZero()) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "gateway-load-report");
                t.setDaemon(true);
                return t;
            });
            // The first report one interval in: at start the gateway's topics may not be created yet.
            timer.scheduleWithFixedDelay(this::report, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        }
        return this;
    }

    @Override
    public synchronized void close() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
    }
}
