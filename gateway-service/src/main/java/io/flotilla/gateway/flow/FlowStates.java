package io.flotilla.gateway.flow;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * Every model's {@link FlowState}, and what their dispatch shares: the flows with a gate ask in flight
 * (one ask per flow at a time, whatever the model). A gate answer, or the gate's word that a flow may
 * try again, dispatches every model. Pure like the states it holds: events in, effects out, each effect
 * with the model it belongs to.
 */
final class FlowStates<H> {

    /** An effect and the model whose state asked for it. */
    record Effect<H>(String model, FlowEffect<H> effect) {
    }

    private final Function<String, FlowLimits> limits;
    private final long quantum;
    private final ToLongFunction<String> weights;
    private final Duration pollInterval;
    private final Set<String> asking = new HashSet<>();
    private final Map<String, FlowState<H>> models = new LinkedHashMap<>();

    /**
     * @param limits       a model's limits (configuration, read once per model)
     * @param quantum      DRR tokens per round of a flow of weight 1
     * @param weights      DRR weight of a flow id
     * @param pollInterval longest busy hold without a capacity stream
     */
    FlowStates(Function<String, FlowLimits> limits, long quantum, ToLongFunction<String> weights, Duration pollInterval) {
        this.limits = limits;
        this.quantum = quantum;
        this.weights = weights;
        this.pollInterval = pollInterval;
    }

    FlowState<H> model(String model) {
        return models.computeIfAbsent(model, m -> new FlowState<>(m, limits.apply(m), quantum, weights, pollInterval, asking));
    }

    /** The models seen so far, in order of first sight. */
    Map<String, FlowState<H>> models() {
        return models;
    }

    /** The gate answered {@code who}'s ask; then every model dispatches. */
    List<Effect<H>> gateAnswered(String model, H who, boolean leased, long now, GateView gate) {
        List<Effect<H>> out = new ArrayList<>(tag(model, model(model).gateAnswered(who, leased, now)));
        out.addAll(dispatchAll(now, gate));
        return out;
    }

    /** The gate says a flow may try again: every model dispatches. */
    List<Effect<H>> dispatchAll(long now, GateView gate) {
        List<Effect<H>> out = new ArrayList<>(0);
        models.forEach((name, state) -> out.addAll(tag(name, state.dispatch(now, gate))));
        return out;
    }

    static <H> List<Effect<H>> tag(String model, List<FlowEffect<H>> effects) {
        if (effects.isEmpty()) {
            return List.of();
        }
        List<Effect<H>> out = new ArrayList<>(effects.size());
        effects.forEach(e -> out.add(new Effect<>(model, e)));
        return out;
    }
}
