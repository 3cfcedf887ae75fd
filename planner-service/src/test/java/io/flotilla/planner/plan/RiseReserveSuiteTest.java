package io.flotilla.planner.plan;

import io.flotilla.planner.config.PlannerProperties;
import io.flotilla.planner.model.PerformanceModel;
import io.flotilla.planner.model.SimulatedEngineProfile;
import io.flotilla.planner.support.AzureSample;
import io.flotilla.planner.support.Configs;
import io.flotilla.planner.support.RepoFiles;
import io.flotilla.planner.support.ShapeSim;
import io.flotilla.planner.support.Shapes;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which rise reserve the planner runs by default, decided on the whole evaluation suite offline: every shape
 * of {@link Shapes#all} (the bench's curves, Poisson arrivals, seeds 1–5) and the Azure-layout sample
 * ({@link AzureSample}), each replayed through the real {@link Planner} configured as the bench configures it
 * ({@link Configs#EVALUATION}) on a simulated clock ({@link ShapeSim}) with cold starts of 10, 15 and 20 s, for
 * each candidate rule. Per run: the SLO proxy ({@link ShapeSim.Result#metShare}: requests that arrived with
 * enough READY replicas for their rate) and worker-seconds as a share of the peak-sized static pool's. The
 * table goes to {@code planner-service/target/rise-reserve-suite.md} (and stdout); the test fails when the
 * rule below picks a candidate other than {@link PlannerProperties}' default.
 *
 * <p>The rule, stated before the numbers were seen: a candidate is eligible when its suite worker-seconds
 * (the mean over the nine suite shapes of each shape's median) are at most {@link #COST_POINTS} points above
 * the reserve-off rule's and no shape's median SLO proxy falls more than {@link #HARM_POINTS} point below
 * off's; of those, the one with the highest suite SLO proxy (mean of the shapes' medians), and among
 * candidates within {@link #TIE_POINTS} points of that, the one with the fewest worker-seconds.
 */
class RiseReserveSuiteTest {

    private static final PerformanceModel MODEL = new PerformanceModel(SimulatedEngineProfile.create(0.25));
    static final double COST_POINTS = 3.0;
    static final double HARM_POINTS = 1.0;
    static final double TIE_POINTS = 0.5;
    private static final int[] COLD_STARTS = {2, 3, 4}; // intervals of 5 s
    private static final int SEEDS = 5;
    private static final int QUIET = 6;
    /** The static pools bench/planner-eval.sh compares with (suite_peak_workers): 4, noisy-plateau 3, the Azure sample 4. */
    private static final int AZURE_STATIC = 4;

    /** A candidate default: {@code memory} as set, or (when {@code memoryStarts} > 0) that many cold starts. */
    record Rule(String name, Duration memory, int memoryStarts, int replicas) {

        Duration memoryAt(int coldStartSeconds) {
            return memoryStarts > 0 ? Duration.ofSeconds((long) memoryStarts * coldStartSeconds) : memory;
        }
    }

    static final List<Rule> CANDIDATES = List.of(
            new Rule("off", Duration.ZERO, 0, 1),
            new Rule("60 s, 1", Duration.ofSeconds(60), 0, 1),
            new Rule("150 s, 1", Duration.ofSeconds(150), 0, 1),
            new Rule("300 s, 1", Duration.ofSeconds(300), 0, 1),
            new Rule("150 s, 2", Duration.ofSeconds(150), 0, 2),
            new Rule("10 starts, 1", Duration.ZERO, 10, 1));

    /**
     * One run's figures: its cold start (s), the SLO proxy, worker-seconds as a share of the static pool's,
     * after the last interval whose rate needed more than one replica how long a second one stayed (s) and
     * the worker-seconds above one replica, and the SLO proxy with a backlog (drained within the 4 s TTFT target).
     */
    record Run(int coldStart, double met, double share, double release, double tail, double metWithBacklog) {
    }

    static Run run(String shape, Rule rule, int cold, long seed) throws IOException {
        List<String> settings = new ArrayList<>(Configs.EVALUATION);
        settings.addAll(List.of("scaling.rise-memory", rule.memoryAt(cold * 5).toSeconds() + "s",
                "scaling.rise-replicas", String.valueOf(rule.replicas())));
        ShapeSim sim = new ShapeSim(Configs.aggregated(settings.toArray(String[]::new)), MODEL, cold, seed);
        Map<String, List<ShapeSim.Phase>> shapes = new LinkedHashMap<>(Shapes.all());
        shapes.putAll(Shapes.heldOut());
        ShapeSim.Result r = shape.equals("azure") ? sim.replay(AzureSample.intervals(5), QUIET, AZURE_STATIC)
                : sim.run(shapes.get(shape), 2000, 64, QUIET, 0, shape.equals("noisy-plateau") ? 3 : 4);
        int lastNeeded = -1;
        int lastKept = -1;
        double tail = 0;
        for (int i = 0; i < r.required().size(); i++) {
            lastNeeded = r.required().get(i) > 1 ? i : lastNeeded;
        }
        for (int i = lastNeeded + 1; i < r.paid().size() && lastNeeded >= 0; i++) {
            tail += (r.paid().get(i) - 1) * 5;
            lastKept = r.targets().get(i) > 1 ? i : lastKept;
        }
        double release = lastNeeded < 0 ? Double.NaN : Math.max(0, lastKept - lastNeeded) * 5;
        return new Run(cold * 5, r.metShare(), r.share(), release, tail, r.metShareWithBacklog(4));
    }

    /** {min, median, max} of one figure over a shape's runs. */
    static double[] spread(List<Run> runs, ToDoubleFunction<Run> f) {
        double[] v = runs.stream().mapToDouble(f).sorted().toArray();
        return new double[] {v[0], v[v.length / 2], v[v.length - 1]};
    }

    static List<String> suiteShapes() {
        List<String> out = new ArrayList<>(Shapes.all().keySet());
        out.add("azure");
        return out;
    }

    /** Runs of one shape under one rule: every cold start and seed (the Azure sample: one trace, every cold start). */
    static List<Run> runs(String shape, Rule rule, int[] colds) throws IOException {
        List<Run> out = new ArrayList<>();
        for (int cold : colds) {
            for (long seed = 1; seed <= (shape.equals("azure") ? 1 : SEEDS); seed++) {
                out.add(run(shape, rule, cold, seed));
            }
        }
        return out;
    }

    @Test
    void theDefaultIsTheRuleThatIsBestOnTheWholeSuite() throws IOException {
        List<String> shapes = suiteShapes();
        List<String> all = new ArrayList<>(shapes);
        all.addAll(Shapes.heldOut().keySet());
        Map<Rule, Map<String, List<Run>>> results = new LinkedHashMap<>();
        for (Rule rule : CANDIDATES) {
            Map<String, List<Run>> byShape = new LinkedHashMap<>();
            for (String shape : all) {
                byShape.put(shape, runs(shape, rule, COLD_STARTS));
            }
            results.put(rule, byShape);
        }
        Map<Rule, double[]> suite = new LinkedHashMap<>(); // means over the suite's shapes of their medians: {SLO proxy, worker-seconds, with backlog}
        for (Rule rule : CANDIDATES) {
            double[] sum = new double[3];
            for (String shape : shapes) {
                List<Run> runs = results.get(rule).get(shape);
                sum[0] += spread(runs, Run::met)[1];
                sum[1] += spread(runs, Run::share)[1];
                sum[2] += spread(runs, Run::metWithBacklog)[1];
            }
            suite.put(rule, new double[] {100 * sum[0] / shapes.size(), 100 * sum[1] / shapes.size(), 100 * sum[2] / shapes.size()});
        }
        List<Rule> eligible = eligible(results, suite, shapes, Run::met);
        Rule pick = pick(eligible, suite, 0);
        Rule pickWithBacklog = pick(eligible(results, suite, shapes, Run::metWithBacklog), suite, 2);

        String table = SuiteTable.markdown(CANDIDATES, shapes, Shapes.heldOut().keySet(), results, suite, eligible, pick,
                pickWithBacklog, rule -> perColdStart(results.get(rule), shapes));
        Path out = RepoFiles.path("planner-service/target/rise-reserve-suite.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, table);
        System.out.println(table);

        PlannerConfig.Scaling defaults = PlannerProperties.defaults().toConfig().scaling();
        assertThat(pick.memoryStarts()).as("the default is a fixed memory").isZero();
        assertThat(List.of(defaults.riseMemory(), defaults.riseReplicas())).as("the suite's pick: %s", pick.name())
                .isEqualTo(List.of(pick.memory(), pick.replicas()));
    }

    /** Candidates within the cost cap whose SLO figure {@code f} falls on no shape more than the harm margin below off's. */
    private static List<Rule> eligible(Map<Rule, Map<String, List<Run>>> results, Map<Rule, double[]> suite, List<String> shapes,
                                       ToDoubleFunction<Run> f) {
        Rule off = CANDIDATES.get(0);
        List<Rule> out = new ArrayList<>();
        for (Rule rule : CANDIDATES) {
            boolean cheap = suite.get(rule)[1] <= suite.get(off)[1] + COST_POINTS;
            boolean harmless = shapes.stream().allMatch(s -> 100 * spread(results.get(rule).get(s), f)[1]
                    >= 100 * spread(results.get(off).get(s), f)[1] - HARM_POINTS);
            if (cheap && harmless) {
                out.add(rule);
            }
        }
        return out;
    }

    /** The eligible candidate with the highest suite SLO figure (column {@code slo}); within the tie margin, the cheapest. */
    private static Rule pick(List<Rule> eligible, Map<Rule, double[]> suite, int slo) {
        double best = eligible.stream().mapToDouble(r -> suite.get(r)[slo]).max().orElseThrow();
        return eligible.stream().filter(r -> suite.get(r)[slo] >= best - TIE_POINTS)
                .min((a, b) -> Double.compare(suite.get(a)[1], suite.get(b)[1])).orElseThrow();
    }

    /** {cold start s, SLO proxy, worker-seconds, with backlog} suite means (of the shapes' medians) per cold start. */
    private static List<double[]> perColdStart(Map<String, List<Run>> byShape, List<String> shapes) {
        List<double[]> out = new ArrayList<>();
        for (int cold : COLD_STARTS) {
            double met = 0;
            double share = 0;
            double backlog = 0;
            for (String shape : shapes) {
                List<Run> runs = byShape.get(shape).stream().filter(r -> r.coldStart() == cold * 5).toList();
                met += spread(runs, Run::met)[1];
                share += spread(runs, Run::share)[1];
                backlog += spread(runs, Run::metWithBacklog)[1];
            }
            out.add(new double[] {cold * 5, 100 * met / shapes.size(), 100 * share / shapes.size(), 100 * backlog / shapes.size()});
        }
        return out;
    }
}
