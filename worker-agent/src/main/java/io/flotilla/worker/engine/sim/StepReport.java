package io.flotilla.worker.engine.sim;

import java.util.List;

/**
 * What one completed step did.
 *
 * @param plan     the schedule it executed
 * @param sampled  requests that received a token, in execution order
 * @param finished requests that finished (length or stop) in the step
 */
public record StepReport(StepPlan plan, List<String> sampled, List<String> finished) {

    public StepReport {
        sampled = List.copyOf(sampled);
        finished = List.copyOf(finished);
    }

    /** True when nothing was scheduled. */
    public boolean idle() {
        return plan.isEmpty();
    }

    public double stepMs() {
        return plan.stepMs();
    }
}
