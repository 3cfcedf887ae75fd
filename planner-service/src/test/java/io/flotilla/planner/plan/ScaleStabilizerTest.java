package io.flotilla.planner.plan;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The break-even rule, decision by decision: 5 s intervals on a real timer's instants (they come 10 ms
 * early), a break-even time of 10 s, the hysteresis of the defaults (replica k needed while the need
 * exceeds 0.8·(k − 1)).
 */
class ScaleStabilizerTest {

    private static final PlannerConfig.Limits LIMITS = new PlannerConfig.Limits(1, 8, 1);
    private static final Duration INTERVAL = Duration.ofSeconds(5);
    private static final Duration B = Duration.ofSeconds(10);
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private static PlannerConfig.Scaling scaling(Duration minHold, double trust) {
        return new PlannerConfig.Scaling(1.0, 0.8, Duration.ZERO, 1.0, minHold, trust, Duration.ofMinutes(5), Duration.ofMinutes(10),
                0.95, 2.0, new PlannerConfig.RiseReserve(Duration.ZERO, 0, 0));
    }

    /** Targets after each of {@code needs}, starting at {@code start} replicas, decided every 4.99 s. */
    private static List<Integer> run(int start, ScaleStabilizer.Outlook outlook, double trust, double... needs) {
        ScaleStabilizer stabilizer = new ScaleStabilizer(scaling(Duration.ZERO, trust), INTERVAL);
        ScaleStabilizer.State st = new ScaleStabilizer.State();
        st.target = start;
        Instant now = T0;
        List<Integer> targets = new ArrayList<>();
        for (double need : needs) {
            now = now.plusMillis(4990);
            int desired = Math.max(LIMITS.min(), (int) Math.ceil(need - 1e-9));
            targets.add(stabilizer.step(st, LIMITS, need, need, desired, now, false, false, B, outlook).target());
        }
        return targets;
    }

    private static List<Integer> run(int start, double... needs) {
        return run(start, ScaleStabilizer.Outlook.NONE, 0.5, needs);
    }

    @Test
    void unneededReplicasGoTogetherOnceTheBreakEvenTimeHasPassedAndJitterCostsNoInterval() {
        // Three replicas unneeded from the first decision: 9.98 s later is within half an interval of 10 s.
        assertThat(run(4, 0.3, 0.3, 0.3, 0.3)).containsExactly(4, 4, 1, 1);
    }

    @Test
    void eachReplicaHasItsOwnClock() {
        // Need 2.0 keeps replicas 1–3 (2.0 > 0.8·2), 1.2 keeps 1–2, 0.3 only the first: each goes 10 s after
        // it was last needed.
        assertThat(run(4, 2.0, 2.0, 1.2, 1.2, 0.3, 0.3, 0.3)).containsExactly(4, 4, 3, 2, 2, 1, 1);
    }

    @Test
    void aNeedInsideTheHoldStartsItAgainAndTheBandHoldsANeedJustBelowTheTarget() {
        // 1.7 at 3 replicas: replica 3 is needed (1.7 > 1.6) although ⌈1.7⌉ = 2; without that, it would have
        // gone in the third decision, 10 s after the first.
        assertThat(run(3, 0.3, 1.7, 0.3, 0.3, 0.3)).containsExactly(3, 3, 3, 1, 1);
    }

    @Test
    void aNoisyWindowScalesUpButOnlyTheForecastsKeepAReplica() {
        // At 2 replicas, windows needing 1.1 (above replica 2's band, 0.8) and forecasts needing 0.7 (under it):
        // the windows are within the target, so nothing scales up, and they do not restart replica 2's hold.
        assertThat(runWithForecasts(2, 1.1, 0.7, 1.1, 0.7, 1.1, 0.7)).containsExactly(2, 2, 1);
        // Judged on the windows, replica 2 would have been needed every time.
        assertThat(runWithForecasts(2, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1)).containsExactly(2, 2, 2);
        // A window needing more than the target scales up at once, whatever the forecasts say, and the replica
        // it adds is needed as of the scale-up: kept for its hold, then released.
        assertThat(runWithForecasts(1, 1.3, 0.7, 0.9, 0.7, 0.9, 0.7, 0.9, 0.7)).containsExactly(2, 2, 1, 1);
    }

    /** Like {@link #run}, with pairs of needs: the whole horizon's (the up rule) and the forecasts' (the holds). */
    private static List<Integer> runWithForecasts(int start, double... pairs) {
        ScaleStabilizer stabilizer = new ScaleStabilizer(scaling(Duration.ZERO, 0.5), INTERVAL);
        ScaleStabilizer.State st = new ScaleStabilizer.State();
        st.target = start;
        Instant now = T0;
        List<Integer> targets = new ArrayList<>();
        for (int i = 0; i + 1 < pairs.length; i += 2) {
            now = now.plusMillis(4990);
            int desired = Math.max(LIMITS.min(), (int) Math.ceil(pairs[i] - 1e-9));
            targets.add(stabilizer.step(st, LIMITS, pairs[i], pairs[i + 1], desired, now, false, false, B,
                    ScaleStabilizer.Outlook.NONE).target());
        }
        return targets;
    }

    @Test
    void aPeriodThatForecastsALongIdleSpellShortensTheHold() {
        ScaleStabilizer.Outlook longIdle = replica -> Optional.of(ScaleStabilizer.NOT_WITHIN_A_PERIOD);
        ScaleStabilizer.Outlook backIn20s = replica -> Optional.of(Duration.ofSeconds(20));
        ScaleStabilizer.Outlook backIn3s = replica -> Optional.of(Duration.ofSeconds(3));
        // λ = 0.5: 5 s when the forecast idle spell outlasts the break-even time; without a period, 10 s.
        assertThat(run(2, longIdle, 0.5, 0.3, 0.3, 0.3)).containsExactly(2, 1, 1);
        assertThat(run(2, backIn20s, 0.5, 0.3, 0.3, 0.3)).containsExactly(2, 1, 1);
        assertThat(run(2, ScaleStabilizer.Outlook.NONE, 0.5, 0.3, 0.3, 0.3)).containsExactly(2, 2, 1);
        // Forecast back within the break-even time: the hold stays B (a forecast that does not come true is
        // found out when the spell reaches B).
        assertThat(run(2, backIn3s, 0.5, 0.3, 0.3, 0.3)).containsExactly(2, 2, 1);
        // trust 0 ignores the forecast.
        assertThat(run(2, longIdle, 0, 0.3, 0.3, 0.3)).containsExactly(2, 2, 1);
    }

    @Test
    void theShortestHoldBoundsEveryHold() {
        ScaleStabilizer s = new ScaleStabilizer(scaling(Duration.ofSeconds(8), 0.5), INTERVAL);
        assertThat(s.hold(B, Duration.ZERO, false, Optional.of(ScaleStabilizer.NOT_WITHIN_A_PERIOD))).isEqualTo(Duration.ofSeconds(8));
        assertThat(s.breakEven(Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(8));
        assertThat(s.breakEven(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void scaleUpsWaitForTheCooldownAndMarkTheNewReplicasNeeded() {
        ScaleStabilizer s = new ScaleStabilizer(new PlannerConfig.Scaling(1.0, 0.8, Duration.ofSeconds(10), 1.0, Duration.ZERO, 0.5,
                Duration.ofMinutes(5), Duration.ofMinutes(10), 0.95, 2.0, new PlannerConfig.RiseReserve(Duration.ZERO, 0, 0)), INTERVAL);
        ScaleStabilizer.State st = new ScaleStabilizer.State();
        st.target = 1;
        Instant t = T0;
        assertThat(s.step(st, LIMITS, 2.5, 2.5, 3, t = t.plusSeconds(5), false, false, B, ScaleStabilizer.Outlook.NONE).target()).isEqualTo(3);
        assertThat(s.step(st, LIMITS, 3.5, 3.5, 4, t = t.plusSeconds(5), false, false, B, ScaleStabilizer.Outlook.NONE).why())
                .contains("waits for the scale-up cooldown");
        // The replicas just added are needed as of the scale-up: not released 5 s later although the need fell.
        assertThat(s.step(st, LIMITS, 0.3, 0.3, 1, t.plusSeconds(1), false, false, B, ScaleStabilizer.Outlook.NONE).target()).isEqualTo(3);
    }

    @Test
    void whileTheForecastsRunShortTheHoldIsLongerAndAHandSetCountHoldsEveryReplica() {
        ScaleStabilizer s = new ScaleStabilizer(scaling(Duration.ZERO, 0.5), INTERVAL);
        ScaleStabilizer.State st = new ScaleStabilizer.State();
        st.target = 4;
        Instant t = T0;
        // Conservative: B/λ = 20 s instead of 10 s.
        for (int i = 0; i < 4; i++) {
            assertThat(s.step(st, LIMITS, 0.3, 0.3, 1, t = t.plusSeconds(5), true, false, B, ScaleStabilizer.Outlook.NONE).target())
                    .isEqualTo(4);
        }
        ScaleStabilizer.Step released = s.step(st, LIMITS, 0.3, 0.3, 1, t = t.plusSeconds(5), true, false, B, ScaleStabilizer.Outlook.NONE);
        assertThat(released.target()).isEqualTo(1);
        assertThat(released.why()).contains("unneeded 20 s ≥ its 20 s hold, conservative");

        // A count set by hand is held for its hold-off (30 s), every replica needed meanwhile; then the holds run.
        Instant adopted = t;
        ScaleStabilizer.adopt(st, 5, adopted, Duration.ofSeconds(30));
        for (int sec = 5; sec < 30; sec += 5) {
            assertThat(s.step(st, LIMITS, 0.3, 0.3, 1, adopted.plusSeconds(sec), false, false, B, ScaleStabilizer.Outlook.NONE).why())
                    .contains("set by hand");
        }
        assertThat(s.step(st, LIMITS, 0.3, 0.3, 1, adopted.plusSeconds(30), false, false, B, ScaleStabilizer.Outlook.NONE).target())
                .isEqualTo(5);
        assertThat(s.step(st, LIMITS, 0.3, 0.3, 1, adopted.plusSeconds(35), false, false, B, ScaleStabilizer.Outlook.NONE).target())
                .isEqualTo(1);
    }
}
