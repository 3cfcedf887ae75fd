package io.flotilla.gateway.flow;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Heap held by queued requests (target: 10,000 queued requests ≤ 50 MB): the flow
 * request, the waiter and its place in its flow's EDF set, its deadline timer and its subscription —
 * everything flow control adds, not the prompt (a 12k-token prompt is 48 KB of token ids whatever
 * queues it). Measured as used heap after full GCs, before and after queueing, over three rounds.
 * Run: java -cp … io.flotilla.gateway.flow.FlowQueueFootprint [requests]
 */
public final class FlowQueueFootprint {

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        Scheduler timer = Schedulers.newParallel("footprint-timer", 1);
        for (int round = 1; round <= 3; round++) {
            FlowController flow = new FlowController(m -> new FlowLimits(1, n + 1, 1, Duration.ofMinutes(10)), timer,
                    new FlowMetrics(new SimpleMeterRegistry(), t -> FlowMetrics.OTHER), 4096, t -> 1, Duration.ofMillis(500));
            flow.capacity("m", true);
            long before = used();
            List<Disposable> subscriptions = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                FlowRequest r = new FlowRequest(Long.toHexString(0x1000_0000_0000_0000L + i * 7919L), "m",
                        Priority.values()[i % 3], "tenant-" + (i % 50), 1 + i % 8000, flow.nowNanos() + Duration.ofMinutes(10).toNanos());
                subscriptions.add(flow.admit(r, false).subscribe());
            }
            long after = used();
            System.out.printf("round %d: %d queued requests hold %.1f MB (%.0f bytes each); queued=%d%n", round, n,
                    (after - before) / 1e6, (after - before) / (double) n, flow.queued("m"));
            subscriptions.forEach(Disposable::dispose);
        }
        timer.dispose();
    }

    private static long used() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        var heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        return heap.getUsed();
    }
}
