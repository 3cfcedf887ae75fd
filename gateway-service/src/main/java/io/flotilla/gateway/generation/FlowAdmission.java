package io.flotilla.gateway.generation;

import io.flotilla.gateway.flow.FlowController;
import io.flotilla.gateway.flow.FlowRejected;
import io.flotilla.gateway.flow.FlowSlot;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.function.Function;

/**
 * One request's {@link FlowSlot}, held by {@code Flux.usingWhen} around its attempts, for generations and
 * embeddings alike: admitted by flow control (a rejection becomes the API's error), released however the
 * attempts end (complete, error, cancel), except that a {@link RouterBusy} answer hands the slot back with the
 * router's retry-after and the request is admitted again with its original deadline. Stateless.
 */
final class FlowAdmission {

    private final FlowController flow;
    private final Duration retryAfter;

    FlowAdmission(FlowController flow, Duration retryAfter) {
        this.flow = flow;
        this.retryAfter = retryAfter;
    }

    /** {@code attempts} run while the request holds its slot; {@code ctx.flowRequest()} is set. */
    <T> Flux<T> around(String model, RequestContext ctx, Function<FlowSlot, Publisher<T>> attempts) {
        return admitted(model, ctx, false, attempts);
    }

    private <T> Flux<T> admitted(String model, RequestContext ctx, boolean readmission,
                                 Function<FlowSlot, Publisher<T>> attempts) {
        Mono<FlowSlot> slot = flow.admit(ctx.flowRequest(), readmission)
                .onErrorMap(FlowRejected.class, e -> FlowRejections.toApiError(model, e, retryAfter))
                .doOnNext(s -> ctx.on(new RequestEvent.Dispatched(s.waited())));
        return Flux.usingWhen(slot,
                        attempts,
                        s -> Mono.fromRunnable(s::release),
                        (s, error) -> Mono.fromRunnable(() -> {
                            if (error instanceof RouterBusy busy) {
                                s.busy(busy.retryAfter());
                            } else {
                                s.release();
                            }
                        }),
                        s -> Mono.fromRunnable(s::release))
                .onErrorResume(RouterBusy.class, busy -> admitted(model, ctx, true, attempts));
    }
}
