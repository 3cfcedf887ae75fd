package io.flotilla.planner.support;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;

/**
 * The evaluation's Azure-layout trace ({@code bench/src/test/resources/azure-code-sample.csv}: generated in
 * the public trace's layout, not the real file) as the planner sees it: per planning interval, the rows that
 * arrived in it, with their mean prompt and output lengths. Time counts from the first row, as the bench
 * replays it. The planner does not depend on the bench module, so the file is read from the repository.
 */
public final class AzureSample {

    private AzureSample() {
    }

    /** The sample's arrivals in intervals of {@code seconds}. */
    public static List<ShapeSim.Interval> intervals(double seconds) throws IOException {
        List<String> lines = Files.readAllLines(RepoFiles.path("bench/src/test/resources/azure-code-sample.csv"));
        List<double[]> rows = new ArrayList<>(); // {time s, context tokens, generated tokens}
        for (String line : lines.subList(1, lines.size())) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split(",");
            String clock = f[0].trim().split("[ T]")[1];
            String[] hms = clock.split(":");
            double t = Integer.parseInt(hms[0]) * 3600 + Integer.parseInt(hms[1]) * 60 + Double.parseDouble(hms[2]);
            rows.add(new double[] {t, Double.parseDouble(f[1]), Double.parseDouble(f[2])});
        }
        double t0 = rows.get(0)[0];
        int n = (int) Math.floor((rows.get(rows.size() - 1)[0] - t0) / seconds) + 1;
        int[] count = new int[n];
        double[] isl = new double[n];
        double[] osl = new double[n];
        for (double[] r : rows) {
            int i = (int) Math.floor((r[0] - t0) / seconds);
            count[i]++;
            isl[i] += r[1];
            osl[i] += r[2];
        }
        List<ShapeSim.Interval> out = new ArrayList<>();
        double lastIsl = isl[0] / Math.max(1, count[0]);
        double lastOsl = osl[0] / Math.max(1, count[0]);
        for (int i = 0; i < n; i++) {
            if (count[i] > 0) {
                lastIsl = isl[i] / count[i];
                lastOsl = osl[i] / count[i];
            }
            out.add(new ShapeSim.Interval(count[i], lastIsl, lastOsl, count[i] / seconds));
        }
        return out;
    }
}
