package io.flotilla.planner.plan;

import io.flotilla.planner.plan.RiseReserveSuiteTest.Figures;
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
                           Map<Rule, Figures> suite, Figures staticPool, double frontier, Rule pick,
                           Function<Rule, Map<Integer, Figures>> perColdStart) {
        StringBuilder b = new StringBuilder();
        Figures off = suite.get(rules.get(0));
        b.append(String.format(Locale.ROOT, "Rules: `scaling.rise-memory`, `rise-memory-cold-starts` (\"10 starts\": ten measured cold"
                + " starts), `rise-replicas`. Suite: means of the nine shapes' medians over cold starts of 10, 15 and 20 s × seeds"
                + " 1–%d (the Azure sample: one trace × 3 cold starts).%n%n", RiseReserveSuiteTest.SEEDS));
        b.append("| rule | met with backlog % | met % | worker-seconds % of static | backlog points per worker-second point over off |\n"
                + "|---|---:|---:|---:|---:|\n");
        for (Rule rule : rules) {
            Figures f = suite.get(rule);
            double ratio = f.ratioOver(off);
            b.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %s |%n", rule == pick ? "**" + rule.name() + "** (pick)"
                    : rule.name(), f.metWithBacklog(), f.met(), f.share(), rule == rules.get(0) ? "—"
                    : Double.isNaN(ratio) ? "no gain" : String.format(Locale.ROOT, "%.2f", ratio)));
        }
        b.append(String.format(Locale.ROOT, "| static pool (peak-sized) | %.1f | %.1f | 100.0 | %.2f (the frontier) |%n",
                staticPool.metWithBacklog(), staticPool.met(), frontier));
        b.append(String.format(Locale.ROOT, "%nThe rule: a rule qualifies when its SLO-with-backlog points per worker-second point over"
                        + " off beat the static pool's (%.2f); of those, the best ratio, and within %.2f of it the fewest"
                        + " worker-seconds. Picked: **%s**.%n%n", frontier, RiseReserveSuiteTest.TIE, pick.name()));
        b.append("Per shape, cells median (min–max) over the runs.\n\n**SLO proxy with a backlog** (primary: what READY cannot serve"
                + " waits; an interval's requests are met when the backlog at its end clears within the 4 s TTFT target):\n\n");
        figure(b, rules, shapes, heldOut, results, suite, Run::metWithBacklog, Figures::metWithBacklog);
        b.append("\n**SLO proxy, strict** (% of requests that arrive with READY ≥ what their rate needs):\n\n");
        figure(b, rules, shapes, heldOut, results, suite, Run::met, Figures::met);
        b.append("\n**Worker-seconds** (% of the peak-sized static pool's):\n\n");
        figure(b, rules, shapes, heldOut, results, suite, Run::share, Figures::share);
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
        b.append("\n**Suite means by cold start** (with a backlog · strict · worker-seconds):\n\n");
        header(b, rules);
        for (int cold : perColdStart.apply(rules.get(0)).keySet()) {
            b.append(String.format(Locale.ROOT, "| cold start %d s", cold));
            for (Rule rule : rules) {
                Figures f = perColdStart.apply(rule).get(cold);
                b.append(String.format(Locale.ROOT, " | %.1f · %.1f · %.1f", f.metWithBacklog(), f.met(), f.share()));
            }
            b.append(" |\n");
        }
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
                               Map<Rule, Map<String, List<Run>>> results, Map<Rule, Figures> suite, ToDoubleFunction<Run> f,
                               ToDoubleFunction<Figures> column) {
        header(b, rules);
        for (String shape : shapes) {
            row(b, shape, rules, results, f);
        }
        b.append("| **suite (mean of the medians)**");
        rules.forEach(r -> b.append(String.format(Locale.ROOT, " | **%.1f**", column.applyAsDouble(suite.get(r)))));
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
