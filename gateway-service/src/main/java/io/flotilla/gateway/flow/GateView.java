package io.flotilla.gateway.flow;

import java.util.function.Predicate;

/**
 * The {@link TenantGate}'s two cheap reads as an event brings them to a {@link FlowState}, as time comes
 * in with the event: whether a flow has an in-flight limit at all, and whether dispatch may try it now.
 */
record GateView(Predicate<String> limited, Predicate<String> mayTry) {

    /** No flow has a limit. */
    static final GateView NONE = new GateView(flow -> false, flow -> true);

    static GateView of(TenantGate gate) {
        return gate == TenantGate.NONE ? NONE : new GateView(gate::limited, gate::mayTry);
    }
}
