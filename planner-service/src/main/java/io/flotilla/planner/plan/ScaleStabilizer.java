package io.flotilla.planner.plan;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Locale;

/**
 * Turns a pool's wanted replica count into its next target without flapping. Rules, in order, for a
 * pool at target T with fractional need r and wanted count D = clamp(⌈r⌉, min, max):
 * <ol>
 *   <li>hand-set hold-off running → keep T;</li>
 *   <li>T outside [min, max] (limits changed) → clamp at once;</li>
 *   <li>idle (no request for {@code idleAfter}) → min at once (nothing is served, draining hurts no one);</li>
 *   <li>up: D &gt; T and r &gt; T·upThreshold → D, once {@code upCooldown} has passed since the last change;</li>
 *   <li>down: D &lt; T and the highest need R seen over the last {@code minStable} (a look-back window,
 *       which must span the whole stable time) has R ≤ (T − 1)·downThreshold — one replica fewer would
 *       still have run below the threshold all that time —, {@code downCooldown} passed since the last
 *       change, and not conservative → max(clamp(⌈R⌉), T − maxDownStep);</li>
 *   <li>otherwise keep T.</li>
 * </ol>
 * The gap between the up rule (r &gt; T) and the down rule (R ≤ 0.8·(T − 1) by default) is the
 * hysteresis band in which a noisy flat load moves nothing. The stable time is a window over the
 * needs, as in Kubernetes' HPA stabilization window, not a timer restarted by each step: once the need
 * has stayed low for the stable time, further steps down are paced by the cooldown and the step size.
 * A conservative interval or a hand-set count empties the window (the stable time starts again).
 */
public final class ScaleStabilizer {

    /** Per-pool memory. {@code target} is -1 until the planner sets a baseline. */
    public static final class State {
        int target = -1;
        Instant lastChange;
        Instant holdUntil;
        /** Needs of the last {@code minStable}, oldest first, plus the newest one before it (the window's edge). */
        final ArrayDeque<Seen> seen = new ArrayDeque<>();

        public int target() {
            return target;
        }
    }

    private record Seen(Instant at, double need) {
    }

    /** The next target and why. */
    public record Step(int target, String why) {
    }

    private final PlannerConfig.Scaling s;
    private final Duration slack;

    /**
     * @param interval the planning interval: decisions come once per interval, so a stable time or
     *                 cooldown counts as passed within half an interval of it — otherwise timer jitter
     *                 (an interval of 4.99 s) would cost a whole extra interval every time
     */
    public ScaleStabilizer(PlannerConfig.Scaling scaling, Duration interval) {
        this.s = scaling;
        this.slack = interval.dividedBy(2);
    }

    public Step step(State st, PlannerConfig.Limits lim, double need, int desired, Instant now,
                     boolean conservative, boolean idle) {
        int t = st.target;
        if (st.holdUntil != null && now.isBefore(st.holdUntil)) {
            st.seen.clear();
            return new Step(t, "hold " + t + " (set by hand; planning resumes at " + st.holdUntil + ")");
        }
        remember(st, need, now);
        if (t < lim.min() || t > lim.max()) {
            return change(st, Math.max(lim.min(), Math.min(lim.max(), t)), now, "limits");
        }
        if (idle) {
            return t > lim.min() ? change(st, lim.min(), now, "idle: no requests for " + s.idleAfter().toSeconds() + " s")
                    : new Step(t, "idle at the minimum");
        }
        if (desired > t && need > t * s.upThreshold()) {
            if (cooling(st, s.upCooldown(), now)) {
                return new Step(t, "up to " + desired + " waits for the scale-up cooldown");
            }
            return change(st, desired, now, "up");
        }
        double threshold = (t - 1) * s.downThreshold();
        if (desired < t && need <= threshold) {
            if (conservative) {
                st.seen.clear();
                return new Step(t, "hold (conservative: no scale-down)");
            }
            double peak = st.seen.stream().mapToDouble(Seen::need).max().orElse(need);
            if (peak > threshold) {
                return new Step(t, String.format(Locale.ROOT, "down waits: need %.2f within the last %d s", peak,
                        s.minStable().toSeconds()));
            }
            Duration low = Duration.between(st.seen.peekFirst().at(), now);
            int to = Math.max(Math.max(lim.min(), (int) Math.ceil(peak - 1e-9)), t - s.maxDownStep());
            if (!passed(low, s.minStable())) {
                return new Step(t, "down to " + to + " after " + s.minStable().toSeconds() + " s stable ("
                        + low.toSeconds() + " s so far)");
            }
            if (cooling(st, s.downCooldown(), now)) {
                return new Step(t, "down to " + to + " waits for the scale-down cooldown");
            }
            return change(st, to, now, "down");
        }
        return new Step(t, "hold");
    }

    /** Adds this interval's need to the window and drops what fell out of it (keeping its edge). */
    private void remember(State st, double need, Instant now) {
        st.seen.addLast(new Seen(now, need));
        Instant start = now.minus(s.minStable()).plus(slack);
        while (st.seen.size() >= 2) {
            Iterator<Seen> it = st.seen.iterator();
            it.next();
            if (it.next().at().isAfter(start)) {
                break;
            }
            st.seen.removeFirst();
        }
    }

    private boolean cooling(State st, Duration cooldown, Instant now) {
        return st.lastChange != null && !passed(Duration.between(st.lastChange, now), cooldown);
    }

    private boolean passed(Duration elapsed, Duration wanted) {
        return elapsed.plus(slack).compareTo(wanted) >= 0;
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
        st.seen.clear();
        st.holdUntil = now.plus(holdOff);
    }
}
