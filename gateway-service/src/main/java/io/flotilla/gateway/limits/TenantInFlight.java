package io.flotilla.gateway.limits;

import io.flotilla.gateway.flow.TenantGate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.ToIntFunction;

/**
 * The per-flow in-flight limit behind flow control's dispatch ({@link TenantGate}): a flow (API key id,
 * or tenant) holds at most {@code limitOf(flow)} places at once, across every model of this gateway
 * and, with a shared store ({@link InFlightLeases}), across every gateway replica.
 *
 * <p>This gateway always counts its own places per flow ({@code held}); that count alone decides
 * without a store, and whenever the store cannot be used (the same call, counted as a fallback), so a
 * replica then admits up to the limit on its own. With the store, a place is a lease there, renewed
 * every third of its TTL while held; when the store finds the flow full, dispatch passes over the flow
 * here until a release notice arrives (pub/sub, sent only while a flow has waiters) or, at the latest,
 * {@code recheck} later.
 */
public final class TenantInFlight implements TenantGate, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TenantInFlight.class);

    private final ToIntFunction<String> limitOf;
    private final InFlightLeases leases;
    private final LimitMetrics metrics;
    private final Scheduler scheduler;
    private final Duration recheck;
    private final String instance;
    private final AtomicLong seq = new AtomicLong();
    private final Map<String, Integer> held = new ConcurrentHashMap<>();
    private final Map<String, Set<String>> remote = new ConcurrentHashMap<>();
    private final Set<String> full = ConcurrentHashMap.newKeySet();
    private final Disposable renewal;
    private volatile Consumer<String> listener = flow -> { };

    /**
     * @param limitOf  a flow's limit; 0 for none
     * @param store    the shared store, or null to count in this process only
     * @param instance this gateway's name in lease ids (unique per process)
     */
    public TenantInFlight(ToIntFunction<String> limitOf, LimitStore store, String keyPrefix, Duration leaseTtl,
                          Duration recheck, String instance, Scheduler scheduler, LimitMetrics metrics) {
        this.limitOf = limitOf;
        this.metrics = metrics;
        this.scheduler = scheduler;
        this.recheck = recheck;
        this.instance = instance;
        if (store == null) {
            this.leases = null;
            this.renewal = null;
        } else {
            this.leases = new InFlightLeases(store, keyPrefix, leaseTtl.toMillis(), 2 * recheck.toMillis());
            leases.onReleased(this::mayTryAgain);
            long every = Math.max(1, leaseTtl.toMillis() / 3);
            this.renewal = scheduler.schedulePeriodically(this::renew, every, every, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public boolean limited(String flow) {
        return limitOf.applyAsInt(flow) > 0;
    }

    @Override
    public boolean mayTry(String flow) {
        int limit = limitOf.applyAsInt(flow);
        return limit <= 0 || (held.getOrDefault(flow, 0) < limit && !full.contains(flow));
    }

    @Override
    public void onMayTry(Consumer<String> listener) {
        this.listener = listener;
    }

    /** Places this gateway holds for {@code flow} now. */
    public int held(String flow) {
        return held.getOrDefault(flow, 0);
    }

    @Override
    public CompletionStage<Lease> acquire(String flow) {
        int limit = limitOf.applyAsInt(flow);
        if (limit <= 0) {
            return CompletableFuture.completedFuture(Lease.NONE);
        }
        if (leases == null) {
            return CompletableFuture.completedFuture(takeLocal(flow, limit));
        }
        String id = instance + "-" + seq.incrementAndGet();
        CompletableFuture<Boolean> asked = leases.acquire(flow, id, limit);
        BiFunction<Boolean, Throwable, Lease> answer = (taken, e) -> {
            if (e != null) {
                metrics.fallback(InFlightLeases.LIMIT, e);
                return takeLocal(flow, limit);
            }
            if (!taken) {
                markFull(flow);
                return null;
            }
            held.merge(flow, 1, Integer::sum);
            remote.computeIfAbsent(flow, f -> ConcurrentHashMap.newKeySet()).add(id);
            return lease(flow, limit, id);
        };
        // Answered on the scheduler, not on Lettuce's event loop: the caller dispatches the request from here.
        // A call that failed at once (the store is away) is answered here, without a hop.
        return asked.isDone() ? asked.handle(answer) : asked.handleAsync(answer, scheduler::schedule);
    }

    /** A place counted here only; null when this gateway already holds {@code limit}. */
    private Lease takeLocal(String flow, int limit) {
        boolean[] taken = {false};
        held.compute(flow, (f, n) -> {
            int now = n == null ? 0 : n;
            if (now >= limit) {
                return n;
            }
            taken[0] = true;
            return now + 1;
        });
        return taken[0] ? lease(flow, limit, null) : null;
    }

    private Lease lease(String flow, int limit, String remoteId) {
        AtomicBoolean released = new AtomicBoolean();
        return () -> {
            if (!released.compareAndSet(false, true)) {
                return;
            }
            int[] before = {0};
            held.computeIfPresent(flow, (f, n) -> {
                before[0] = n;
                return n <= 1 ? null : n - 1;
            });
            if (remoteId != null) {
                Set<String> ids = remote.get(flow);
                if (ids != null) {
                    ids.remove(remoteId);
                }
                leases.release(flow, remoteId).whenComplete((r, e) -> {
                    if (e != null) {
                        log.debug("release of {} for {} failed ({}); it expires in the store", remoteId, flow, e.toString());
                    }
                });
            }
            if (before[0] >= limit || full.contains(flow)) {
                mayTryAgain(flow); // a place of ours freed: our own waiters may take it
            }
        };
    }

    private void markFull(String flow) {
        full.add(flow);
        scheduler.schedule(() -> mayTryAgain(flow), recheck.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void mayTryAgain(String flow) {
        full.remove(flow);
        listener.accept(flow);
    }

    private void renew() {
        remote.forEach((flow, ids) -> {
            if (ids.isEmpty()) {
                return; // kept: an acquire may be adding to it now (flows are bounded by callers' keys)
            }
            leases.renew(flow, List.copyOf(ids)).whenComplete((r, e) -> {
                if (e != null) {
                    log.debug("lease renewal for {} failed ({}); retried next round", flow, e.toString());
                }
            });
        });
    }

    @Override
    public void close() {
        if (renewal != null) {
            renewal.dispose();
        }
    }
}
