package io.flotilla.gateway.generation;

import io.flotilla.gateway.client.RouterClient;
import io.flotilla.gateway.routing.FleetView;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RoutingMode;
import reactor.core.publisher.Mono;

import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The worker one attempt runs on, held from its Route (or the gateway's own pick) until the attempt
 * ends, however it ends: {@link #release()} gives back the router booking on every replica the Route
 * touched (one that timed out may have booked too; Release is idempotent) and this gateway's count of
 * requests on the worker. Acquired and released by {@code Flux.usingWhen} around the attempt, so
 * completion, failure, migration and cancellation all end it the same way, exactly once.
 *
 * @param router the replica that answered, -1 when the gateway picked the worker itself
 */
record Booking(String requestId, RouteDecision decision, RoutingMode mode, int router, Set<Integer> touched,
               RouterClient routers, FleetView fleet, AtomicBoolean released) {

    static Booking of(String requestId, RouteDecision decision, RoutingMode mode, int router, Set<Integer> touched,
                      RouterClient routers, FleetView fleet) {
        fleet.started(decision.getWorkerId());
        return new Booking(requestId, decision, mode, router, Set.copyOf(touched), routers, fleet, new AtomicBoolean());
    }

    String workerId() {
        return decision.getWorkerId();
    }

    Mono<Void> release() {
        return Mono.defer(() -> {
            if (!released.compareAndSet(false, true)) {
                return Mono.empty();
            }
            fleet.ended(workerId());
            routers.release(requestId, touched).subscribe(); // fire and forget: the next step need not wait
            return Mono.empty();
        });
    }
}
