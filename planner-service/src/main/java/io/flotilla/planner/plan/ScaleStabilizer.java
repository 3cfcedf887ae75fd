package io.flotilla.planner.plan;

import java.time.Duration;
import java.time.Instant;

/**
 * Turns a pool's wanted replica count into its next target without flapping. Rules, in order, for a
 * pool at target T with fractional need r and wanted count D = clamp(⌈r⌉, min, max):
 * <ol>
 *   <li>hand-set hold-off running → keep T;</li>
 *   <li>T outside [min, max] (limits changed) → clamp at once;</li>
 *   <li>idle (no request for {@code idleAfter}) → min at once (nothing is served, draining hurts no one);</li>
 *   <li>up: D &gt; T and r &gt; T·upThreshold → D, once {@code upCooldown} has passed since the last change;</li>
 *   <li>down: D &lt; T and r ≤ (T − 1)·downThreshold (one replica fewer would still run below the
 *       threshold) held without a break for {@code minStable}, {@code downCooldown} passed since the last
 *       change, and not conservative → max(D, T − maxDownStep);</li>
 *   <li>otherwise keep T.</li>
 * </ol>
 * The gap between the up rule (r &gt; T) and the down rule (r ≤ 0.8·(T − 1) by default) is the
 * hysteresis band in which a noisy flat load moves nothing.
 */
public final class ScaleStabilizer {

    /** Per-pool memory. {@code target} is -1 until the planner sets a baseline. */
    public static final class State {
        int target = -1;
        Instant lastChange;
        Instant downSince;
        Instant holdUntil;

        public int target() {
            return target;
        }
    }

    /** The next target and why. */
    public record Step(int target, String why) {
    }

    private final PlannerConfig.Scaling s;

    public ScaleStabilizer(PlannerConfig.Scaling scaling) {
        this.s = scaling;
    }

    public Step step(State st, PlannerConfig.Limits lim, double need, int desired, Instant now,
                     boolean conservative, boolean idle) {
        int t = st.target;
        if (st.holdUntil != null && now.isBefore(st.holdUntil)) {
            st.downSince = null;
            return new Step(t, "hold " + t + " (set by hand; planning resumes at " + st.holdUntil + ")");
        }
        if (t < lim.min() || t > lim.max()) {
            st.downSince = null;
            return change(st, Math.max(lim.min(), Math.min(lim.max(), t)), now, "limits");
        }
        if (idle) {
            st.downSince = null;
            return t > lim.min() ? change(st, lim.min(), now, "idle: no requests for " + s.idleAfter().toSeconds() + " s")
                    : new Step(t, "idle at the minimum");
        }
        if (desired > t && need > t * s.upThreshold()) {
            st.downSince = null;
            if (cooling(st, s.upCooldown(), now)) {
                return new Step(t, "up to " + desired + " waits for the scale-up cooldown");
            }
            return change(st, desired, now, "up");
        }
        if (desired < t && need <= (t - 1) * s.downThreshold()) {
            if (conservative) {
                st.downSince = null;
                return new Step(t, "hold (conservative: no scale-down)");
            }
            if (st.downSince == null) {
                st.downSince = now;
            }
            Duration stable = Duration.between(st.downSince, now);
            if (stable.compareTo(s.minStable()) < 0) {
                return new Step(t, "down to " + Math.max(desired, t - s.maxDownStep()) + " after "
                        + s.minStable().toSeconds() + " s stable (" + stable.toSeconds() + " s so far)");
            }
            if (cooling(st, s.downCooldown(), now)) {
                return new Step(t, "down waits for the scale-down cooldown");
            }
            Step step = change(st, Math.max(desired, t - s.maxDownStep()), now, "down");
            st.downSince = now;
            return step;
        }
        st.downSince = null;
        return new Step(t, "hold");
    }

    private static boolean cooling(State st, Duration cooldown, Instant now) {
        return st.lastChange != null && Duration.between(st.lastChange, now).compareTo(cooldown) < 0;
    }

    private static Step change(State st, int target, Instant now, String why) {
        int from = st.target;
        st.target = target;
        st.lastChange = now;
        return new Step(target, from + "→" + target + " (" + why + ")");
    }

    /** Adopts a count set by someone else: kept for {@code holdOff}, then planned from. */
    static void adopt(State st, int replicas, Instant now, Duration holdOff) {
        st.target = replicas;
        st.lastChange = now;
        st.downSince = null;
        st.holdUntil = now.plus(holdOff);
    }
}
