package io.flotilla.planner.plan;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * Turns a pool's need into its next target. Rules, in order, for a pool at target T with fractional
 * need r (over the whole horizon: the interval just observed and the forecasts), the forecasts' need f
 * (the same horizon without the interval just observed) and wanted count D = clamp(⌈r⌉, min, max):
 * <ol>
 *   <li>hand-set hold-off running → keep T;</li>
 *   <li>T outside [min, max] (limits changed) → clamp at once;</li>
 *   <li>idle (no request for {@code idleAfter}) → min at once (nothing is served, draining hurts no one);</li>
 *   <li>up: D &gt; T and r &gt; T·upThreshold → D, once {@code upCooldown} has passed since the last change;</li>
 *   <li>down, the break-even rule: replica k (the k-th of the pool) is <em>needed</em> while
 *       f &gt; (k − 1)·downThreshold; each replica above the minimum is kept until it has gone unneeded for
 *       its hold, then released — all replicas whose hold ran out at once.</li>
 * </ol>
 * The hold is priced by the cold start. Releasing an idle replica and starting one again when load
 * returns costs one cold start of worker time (B = restartCost × cold start, at least {@code minHold});
 * keeping it costs its idle time. That is the ski-rental problem, and the deterministic break-even
 * strategy — keep it for B, then release — pays at most 2× what an oracle that knew the idle spell's
 * length would: an idle spell of length y costs min(y, B) to the oracle, and y (y ≤ B) or B + B to the
 * rule. The hold follows the planner's confidence in the need it sizes, with λ = 1 − trust (Purohit,
 * Svitkina and Kumar, "Improving online algorithms via ML predictions", NeurIPS 2018): λ·B when a
 * detected period forecasts the idle spell to last at least B — at most (1 + λ)× the oracle when that
 * forecast is right; B/λ while the forecasts run short of the traffic (conservative: the need may be
 * underestimated, so the replica may not be idle at all) — at most (1 + 1/λ)× the oracle whatever the
 * forecasts say; B otherwise. The rule is evaluated every interval with the spell so far, so a
 * forecast return that does not come corrects itself: once a replica has been unneeded for B, the
 * forecast spell is at least B too, and a replica forecast back within B is kept because it is within
 * B. So recurring bursts whose gaps are shorter than the break-even keep their replicas, a periodic lull
 * longer than it gives them back early, and a one-off burst gives them back after B.
 *
 * <p>Why the hold follows the forecasts' need, not the observed interval's: one interval's count is a
 * noisy measure of the rate (a Poisson count of 10 requests is ±32 %), and a window above the band is
 * evidence of a possible rise — the up rule acts on it at once — but not that the replica will be
 * needed: the forecasts, which that window feeds, say that. Marked from the raw window, every noisy
 * interval restarted the hold of a replica the traffic no longer needed (two-burst's 2 req/s valley at
 * 5 s intervals has windows of 2.8–3.4 req/s, each above the second replica's band).
 *
 * <p>The band between the up rule (r &gt; T) and the need of the last replica (f &gt; 0.8·(T − 1) by
 * default) is where a noisy flat load moves nothing. A replica is released only after its hold since
 * it was last needed, so no pool goes up, down and up again within its shortest hold. A hand-set count
 * marks every replica needed (the holds start again when its hold-off ends).
 */
public final class ScaleStabilizer {

    /** When a pool's replicas are needed again, from a detected period. */
    public interface Outlook {

        /** No period known: every hold is the break-even time. */
        Outlook NONE = replica -> Optional.empty();

        /**
         * How long until replica {@code replica} (1-based) is needed again by the seasonal forecast; empty
         * without a period; {@link #NOT_WITHIN_A_PERIOD} when the forecast does not need it within a period.
         */
        Optional<Duration> untilNeeded(int replica);
    }

    /** The forecast does not need the replica within a whole period. */
    public static final Duration NOT_WITHIN_A_PERIOD = Duration.ofSeconds(Long.MAX_VALUE);

    /** Per-pool memory. {@code target} is -1 until the planner sets a baseline. */
    public static final class State {
        int target = -1;
        Instant lastChange;
        Instant holdUntil;
        /** lastNeeded[k]: when replica k was last needed (k = 1 … target); index 0 unused. */
        Instant[] lastNeeded = new Instant[1];

        public int target() {
            return target;
        }
    }

    /** The next target and why. */
    public record Step(int target, String why) {
    }

    private final PlannerConfig.Scaling s;
    private final Duration slack;

    /**
     * @param interval the planning interval: decisions come once per interval, so a hold or cooldown
     *                 counts as passed within half an interval of it — otherwise timer jitter (an
     *                 interval of 4.99 s) would cost a whole extra interval every time
     */
    public ScaleStabilizer(PlannerConfig.Scaling scaling, Duration interval) {
        this.s = scaling;
        this.slack = interval.dividedBy(2);
    }

    /** The break-even time B for a pool whose replicas take {@code coldStart} to become ready. */
    public Duration breakEven(Duration coldStart) {
        Duration priced = Duration.ofMillis(Math.round(coldStart.toMillis() * s.restartCost()));
        return priced.compareTo(s.minHold()) < 0 ? s.minHold() : priced;
    }

    /**
     * @param need      replicas the whole horizon needs (r): the up rule
     * @param keepNeed  replicas the forecasts need (f): which replicas are still needed
     * @param breakEven the pool's break-even time ({@link #breakEven})
     * @param outlook   when its replicas are needed again, from a detected period
     */
    public Step step(State st, PlannerConfig.Limits lim, double need, double keepNeed, int desired, Instant now, boolean conservative,
                     boolean idle, Duration breakEven, Outlook outlook) {
        int t = st.target;
        if (st.holdUntil != null && now.isBefore(st.holdUntil)) {
            markNeeded(st, t, now);
            return new Step(t, "hold " + t + " (set by hand; planning resumes at " + st.holdUntil + ")");
        }
        if (t < lim.min() || t > lim.max()) {
            return change(st, Math.max(lim.min(), Math.min(lim.max(), t)), now, "limits");
        }
        if (idle) {
            return t > lim.min() ? change(st, lim.min(), now, "idle: no requests for " + s.idleAfter().toSeconds() + " s")
                    : new Step(t, "idle at the minimum");
        }
        if (st.lastNeeded.length <= t) {
            Instant[] grown = Arrays.copyOf(st.lastNeeded, t + 1);
            Arrays.fill(grown, st.lastNeeded.length, t + 1, now); // replicas of a baseline count as needed when first seen
            st.lastNeeded = grown;
        }
        int needed = (int) Math.min(t, Math.ceil(keepNeed / s.downThreshold() - 1e-9));
        markNeeded(st, Math.max(0, needed), now);
        if (desired > t && need > t * s.upThreshold()) {
            if (cooling(st, s.upCooldown(), now)) {
                return new Step(t, "up to " + desired + " waits for the scale-up cooldown");
            }
            markNeeded(st, desired, now);
            return change(st, desired, now, "up");
        }
        int keep = t;
        String top = null;
        while (keep > lim.min()) {
            Duration unneeded = Duration.between(st.lastNeeded[keep], now);
            Duration hold = hold(breakEven, unneeded, conservative, outlook.untilNeeded(keep));
            boolean release = passed(unneeded, hold);
            if (keep == t) {
                top = String.format(Locale.ROOT, "replica %d unneeded %d s %s its %d s hold%s", t, unneeded.toSeconds(),
                        release ? "≥" : "of", hold.toSeconds(), conservative ? ", conservative" : "");
            }
            if (!release) {
                break;
            }
            keep--;
        }
        if (keep < t) {
            return change(st, keep, now, "down: " + top);
        }
        return new Step(t, top == null || Duration.between(st.lastNeeded[t], now).isZero() ? "hold" : "hold (" + top + ")");
    }

    /**
     * The hold of a replica unneeded for {@code unneeded}: B/λ while the forecasts run short
     * (conservative: the need they size may be too low); λ·B when a detected period forecasts the idle
     * spell (unneeded so far + until needed again) to last at least B; else B. Never below {@code minHold}.
     */
    Duration hold(Duration breakEven, Duration unneeded, boolean conservative, Optional<Duration> untilNeeded) {
        double factor = 1;
        if (conservative) {
            factor = 1 / s.lambda();
        } else if (untilNeeded.isPresent() && untilNeeded.get().compareTo(breakEven.minus(unneeded)) >= 0) {
            factor = s.lambda();
        }
        Duration h = Duration.ofMillis(Math.round(breakEven.toMillis() * factor));
        return h.compareTo(s.minHold()) < 0 ? s.minHold() : h;
    }

    /** Replicas 1 … upTo are needed at {@code now}. */
    private static void markNeeded(State st, int upTo, Instant now) {
        if (st.lastNeeded.length <= upTo) {
            st.lastNeeded = Arrays.copyOf(st.lastNeeded, upTo + 1);
        }
        Arrays.fill(st.lastNeeded, 1, upTo + 1, now);
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
        if (target > from) {
            markNeeded(st, target, now);
        }
        return new Step(target, from + "→" + target + " (" + why + ")");
    }

    /** Adopts a count set by someone else: kept for {@code holdOff}, then planned from. */
    static void adopt(State st, int replicas, Instant now, Duration holdOff) {
        st.target = replicas;
        st.lastChange = now;
        st.holdUntil = now.plus(holdOff);
        markNeeded(st, replicas, now);
    }
}
