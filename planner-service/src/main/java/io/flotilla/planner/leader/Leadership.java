package io.flotilla.planner.leader;

/**
 * Whether this planner replica applies scaling targets. Every replica observes and decides; only the one
 * that leads hands its targets to the connector, so two replicas never scale the same Deployment.
 */
public interface Leadership {

    /** A single planner (local cluster, one replica): it always leads. */
    Leadership SOLE = new Leadership() {
        @Override
        public boolean leads() {
            return true;
        }

        @Override
        public String describe() {
            return "sole planner";
        }
    };

    /** True while this replica may apply targets. */
    boolean leads();

    /** What the election rests on, for the actuator and logs. */
    String describe();
}
