package io.flotilla.planner.plan;

import io.flotilla.planner.model.PerformanceModel;
import io.flotilla.planner.model.SimulatedEngineProfile;
import io.flotilla.planner.support.Configs;
import io.flotilla.planner.support.ShapeSim;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The two-burst trace the suite replays on the cluster ({@code two-burst-counts.txt}: its arrivals per 5 s),
 * through the planner with the evaluation's settings, on a simulated clock: what the planner decides on
 * the real trace's Poisson noise, which the simulated shapes draw differently. Latencies are not simulated,
 * so the correction factors stay 1; the targets are divided by what the cluster measured instead (f_ttft
 * 0.5, its bound; f_itl 1.2 on the plateaus: 8 s and 167 ms), which gives the needs the cluster's
 * decisions show (2.65 replicas at 8 req/s, 2.98 at 9). Cold starts of 1–4 intervals (5–20 s: what the
 * cluster measured on a quiet and on a loaded machine). Prints the series and the worker-seconds share.
 */
class TwoBurstReplayTest {

    private static final PerformanceModel MODEL = new PerformanceModel(SimulatedEngineProfile.create(0.25));
    private static final int STATIC_POOL = 4;
    private static final int QUIET = 6;

    private static ShapeSim.Result replay(int coldIntervals, String... settings) throws IOException {
        List<String> all = new ArrayList<>(List.of("interval", "5s", "sla.ttft", "8000ms", "sla.itl", "167ms",
                "cold-start.ready-time", "30s", "cold-start.learn", "true", "scaling.up-cooldown", "5s", "scaling.min-hold", "10s",
                "seasonality.min-period", "25s", "seasonality.max-period", "120s", "aggregated.max", "4"));
        all.addAll(List.of(settings));
        PlannerConfig config = Configs.aggregated(all.toArray(String[]::new));
        return new ShapeSim(config, MODEL, coldIntervals, 0).replay(trace(), QUIET, STATIC_POOL);
    }

    private static List<ShapeSim.Interval> trace() throws IOException {
        List<ShapeSim.Interval> out = new ArrayList<>();
        try (InputStream in = TwoBurstReplayTest.class.getResourceAsStream("/two-burst-counts.txt")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.trim().split("\\s+");
                int n = Integer.parseInt(f[0]);
                out.add(n == 0 ? new ShapeSim.Interval(0, 2000, 64, 0)
                        : new ShapeSim.Interval(n, Double.parseDouble(f[1]), Double.parseDouble(f[2]), n / 5.0));
            }
        }
        return out;
    }

    private static String describe(String what, ShapeSim.Result r) {
        return String.format(Locale.ROOT, "%-28s share %.3f of a static %d, short %d, ups %d, downs %d: %s", what, r.share(),
                STATIC_POOL, r.shortIntervals(), r.ups(), r.downs(),
                r.paid().stream().map(String::valueOf).collect(Collectors.joining()));
    }

    @Test
    void noisyWindowsNearAReplicaBoundaryNoLongerStartWorkers() throws IOException {
        ShapeSim.Result gated = replay(2, "scaling.rise-memory", "0s");
        ShapeSim.Result everyWindow = replay(2, "scaling.window-z", "0", "scaling.rise-memory", "0s");
        System.out.println(describe("window-z 2 (default)", gated));
        System.out.println(describe("window-z 0 (every window)", everyWindow));
        assertThat(trace()).hasSize(56);
        // Same arrivals, fewer worker-seconds, and no more intervals short of what the arrivals needed.
        assertThat(gated.workerSeconds()).isLessThan(everyWindow.workerSeconds());
        assertThat(gated.shortIntervals()).isLessThanOrEqualTo(everyWindow.shortIntervals());
        assertThat(gated.ups()).isLessThan(everyWindow.ups());
        noUpDownUpWithinTheHold(gated, 2);
    }

    @Test
    void everyIntervalOfColdStartCostsWorkerSeconds() throws IOException {
        double previous = 0;
        for (int cold = 1; cold <= 4; cold++) {
            ShapeSim.Result r = replay(cold, "scaling.rise-memory", "0s");
            System.out.println(describe("cold start " + cold * 5 + " s", r));
            assertThat(r.share()).as("cold start %d intervals", cold).isGreaterThan(previous);
            previous = r.share();
            noUpDownUpWithinTheHold(r, cold);
        }
    }

    /**
     * The valley between the bursts (130–180 s at 2 req/s) needs one worker by the forecasts; the second ramp
     * (2 → 9 req/s in 20 s) needs a second READY when it begins, which a worker started on seeing it is not.
     * The first ramp's rise within 15 s (one 10 s cold start and an interval) keeps it.
     */
    @Test
    void theRiseReserveKeepsASecondWorkerThroughTheValleyForTheSecondRamp() throws IOException {
        ShapeSim.Result reserve = replay(2, "scaling.rise-memory", "150s");
        ShapeSim.Result none = replay(2, "scaling.rise-memory", "0s");
        System.out.println(describe("rise reserve 150 s", reserve));
        System.out.println(describe("no rise reserve", none));
        int valley = QUIET + 150 / 5;
        int secondRamp = QUIET + 180 / 5;
        assertThat(none.ready().subList(valley, secondRamp)).contains(1);
        assertThat(reserve.ready().subList(valley, secondRamp + 1)).allMatch(n -> n >= 2);
        assertThat(reserve.shortIntervals()).isLessThan(none.shortIntervals());
        assertThat(reserve.decisions().get(valley).riseReserve()).isGreaterThan(0.5);
        assertThat(reserve.decisions().get(valley).reason()).contains("with the rise reserve of");
        // Its price: the second worker through the valley and one more on the last ramp down, under 8 points.
        assertThat(reserve.share() - none.share()).isBetween(0.0, 0.08);
        noUpDownUpWithinTheHold(reserve, 2);
    }

    /** No scale-up, scale-down and scale-up again within the break-even time (here the cold start, at least 10 s). */
    private static void noUpDownUpWithinTheHold(ShapeSim.Result r, int coldIntervals) {
        int hold = Math.max(2, coldIntervals);
        List<int[]> changes = r.changes();
        for (int i = 0; i + 2 < changes.size(); i++) {
            if (changes.get(i)[1] > 0 && changes.get(i + 1)[1] < 0 && changes.get(i + 2)[1] > 0) {
                assertThat(changes.get(i + 2)[0] - changes.get(i)[0]).as("up-down-up at %d", changes.get(i)[0]).isGreaterThan(hold);
            }
        }
    }
}
