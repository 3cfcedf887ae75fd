package io.flotilla.planner.plan;

import io.flotilla.planner.plan.RiseReserveSuiteTest.Rule;
import io.flotilla.planner.plan.RiseReserveSuiteTest.Run;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

import static io.flotilla.planner.plan.RiseReserveSuiteTest.spread;

/** The markdown of {@link RiseReserveSuiteTest}: what it ran, per shape and rule, and which rule it picked. */
final class SuiteTable {

    /** Shapes whose load falls to one replica's for a long tail: where the reserve gives up the release after B. */
    private static final List<String> ONE_OFF = List.of("single-burst", "flash-crowd", "two-rise-70s");

    private SuiteTable() {
    }

    static String markdown(List<Rule> rules, List<String> shapes, Collection<String> heldOut, Map<Rule, Map<String, List<Run>>> results,
                           Map<Rule, double[]> suite, List<Rule> eligible, Rule pick, Rule pickWithBacklog,
                           Function<Rule, List<double[]>> perColdStart) {
        StringBuilder b = new StringBuilder();
        b.append("Rule: `scaling.rise-memory`, `scaling.rise-replicas` (\"10 starts\": ten measured cold starts). Cells: median (min–max)\n"
                + "over cold starts of 10, 15 and 20 s × seeds 1–5 (the Azure sample: one trace × 3 cold starts).\n\n");
        b.append("**SLO proxy** (% of requests that arrive with READY ≥ what their rate needs):\n\n");
        figure(b, rules, shapes, heldOut, results, suite, Run::met, 0);
        b.append("\n**SLO proxy with a backlog** (what READY cannot serve waits; an interval's requests are met when the backlog at its"
                + " end clears within the 4 s TTFT target):\n\n");
        figure(b, rules, shapes, heldOut, results, suite, Run::metWithBacklog, 2);
        b.append("\n**Worker-seconds** (% of the peak-sized static pool's):\n\n");
        figure(b, rules, shapes, heldOut, results, suite, Run::share, 1);
        b.append("\n**After a one-off burst** (from the last interval whose rate needs more than one replica to the end):"
                + " seconds a second replica stays, median (max), · worker-seconds above one replica, median:\n\n");
        header(b, rules);
        for (String shape : ONE_OFF) {
            b.append("| ").append(shape).append(heldOut.contains(shape) ? " (held out)" : "");
            for (Rule rule : rules) {
                List<Run> runs = results.get(rule).get(shape);
                double[] release = spread(runs, Run::release);
                b.append(String.format(Locale.ROOT, " | %.0f (%.0f) · %.0f", release[1], release[2], spread(runs, Run::tail)[1]));
            }
            b.append(" |\n");
        }
        b.append("\n**Suite means by cold start** (SLO proxy · with a backlog · worker-seconds, means of the nine shapes' medians):\n\n");
        header(b, rules);
        int colds = perColdStart.apply(rules.get(0)).size();
        for (int c = 0; c < colds; c++) {
            b.append(String.format(Locale.ROOT, "| cold start %.0f s", perColdStart.apply(rules.get(0)).get(c)[0]));
            for (Rule rule : rules) {
                double[] v = perColdStart.apply(rule).get(c);
                b.append(String.format(Locale.ROOT, " | %.1f · %.1f · %.1f", v[1], v[3], v[2]));
            }
            b.append(" |\n");
        }
        b.append(String.format(Locale.ROOT, "%nEligible (suite worker-seconds ≤ off's + %.0f points, no shape's median SLO proxy more than %.0f"
                        + " point below off's): %s. Picked (highest suite SLO proxy; within %.1f points, the fewest worker-seconds): **%s**.%n",
                RiseReserveSuiteTest.COST_POINTS, RiseReserveSuiteTest.HARM_POINTS,
                String.join(", ", eligible.stream().map(Rule::name).toList()), RiseReserveSuiteTest.TIE_POINTS, pick.name()));
        b.append(String.format(Locale.ROOT, "The same rule on the SLO proxy with a backlog picks **%s**.%n", pickWithBacklog.name()));
        return b.toString();
    }

    private static void header(StringBuilder b, List<Rule> rules) {
        b.append("| shape");
        rules.forEach(r -> b.append(" | ").append(r.name()));
        b.append(" |\n|---");
        rules.forEach(r -> b.append("|---:"));
        b.append("|\n");
    }

    private static void figure(StringBuilder b, List<Rule> rules, List<String> shapes, Collection<String> heldOut,
                               Map<Rule, Map<String, List<Run>>> results, Map<Rule, double[]> suite, ToDoubleFunction<Run> f, int column) {
        header(b, rules);
        for (String shape : shapes) {
            row(b, shape, rules, results, f);
        }
        b.append("| **suite (mean of the medians)**");
        rules.forEach(r -> b.append(String.format(Locale.ROOT, " | **%.1f**", suite.get(r)[column])));
        b.append(" |\n");
        for (String shape : heldOut) {
            row(b, shape + " (held out)", rules, results, f);
        }
    }

    private static void row(StringBuilder b, String label, List<Rule> rules, Map<Rule, Map<String, List<Run>>> results,
                            ToDoubleFunction<Run> f) {
        String shape = label.replace(" (held out)", "");
        b.append("| ").append(label);
        for (Rule rule : rules) {
            double[] v = spread(results.get(rule).get(shape), f);
            b.append(String.format(Locale.ROOT, " | %.1f (%.1f–%.1f)", 100 * v[1], 100 * v[0], 100 * v[2]));
        }
        b.append(" |\n");
    }
}
