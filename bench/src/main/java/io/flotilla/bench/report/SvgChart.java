package io.flotilla.bench.report;

import java.util.List;
import java.util.Locale;

/**
 * Inline SVG charts for the self-contained HTML reports: line/point charts with linear axes and
 * grouped bar charts. No scripts, no external resources. Input arrays are drawn as given; callers
 * downsample long series first ({@link #stride}).
 */
final class SvgChart {

    static final String[] PALETTE = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
    private static final int W = 760;
    private static final int H = 320;
    private static final int LEFT = 70;
    private static final int RIGHT = 20;
    private static final int TOP = 50;
    private static final int BOTTOM = 50;

    /** A named series; {@code points} draws dots instead of a polyline. */
    record Series(String name, double[] xs, double[] ys, boolean points) {
    }

    private SvgChart() {
    }

    static String lines(String title, String xLabel, String yLabel, List<Series> series) {
        double xMin = Double.POSITIVE_INFINITY, xMax = Double.NEGATIVE_INFINITY, yMax = 0;
        for (Series s : series) {
            for (int i = 0; i < s.xs.length; i++) {
                if (Double.isFinite(s.xs[i]) && Double.isFinite(s.ys[i])) {
                    xMin = Math.min(xMin, s.xs[i]);
                    xMax = Math.max(xMax, s.xs[i]);
                    yMax = Math.max(yMax, s.ys[i]);
                }
            }
        }
        if (xMin == Double.POSITIVE_INFINITY) {
            return empty(title);
        }
        xMin = Math.min(0, xMin);
        double[] xt = ticks(xMin, xMax);
        double[] yt = ticks(0, yMax);
        double x0 = xt[0], x1 = xt[xt.length - 1], y1 = yt[yt.length - 1];
        StringBuilder sb = open(title);
        axes(sb, xt, yt, x0, x1, 0, y1, xLabel, yLabel);
        for (int k = 0; k < series.size(); k++) {
            Series s = series.get(k);
            String color = PALETTE[k % PALETTE.length];
            if (s.points) {
                sb.append("<g fill=\"").append(color).append("\" fill-opacity=\"0.55\">");
                for (int i = 0; i < s.xs.length; i++) {
                    if (Double.isFinite(s.xs[i]) && Double.isFinite(s.ys[i])) {
                        sb.append("<circle r=\"2\" cx=\"").append(f(px(s.xs[i], x0, x1))).append("\" cy=\"")
                                .append(f(py(s.ys[i], 0, y1))).append("\"/>");
                    }
                }
                sb.append("</g>");
            } else {
                sb.append("<polyline fill=\"none\" stroke-width=\"1.8\" stroke=\"").append(color).append("\" points=\"");
                for (int i = 0; i < s.xs.length; i++) {
                    if (Double.isFinite(s.xs[i]) && Double.isFinite(s.ys[i])) {
                        sb.append(f(px(s.xs[i], x0, x1))).append(',').append(f(py(s.ys[i], 0, y1))).append(' ');
                    }
                }
                sb.append("\"/>");
            }
        }
        legend(sb, series.stream().map(Series::name).toList());
        return sb.append("</svg>").toString();
    }

    /** Grouped bars: one group per category, one bar per series. */
    static String bars(String title, String yLabel, List<String> categories, List<String> seriesNames, double[][] values) {
        if (categories.isEmpty()) {
            return empty(title);
        }
        double yMax = 0;
        for (double[] v : values) {
            for (double d : v) {
                if (Double.isFinite(d)) {
                    yMax = Math.max(yMax, d);
                }
            }
        }
        double[] yt = ticks(0, yMax);
        double y1 = yt[yt.length - 1];
        StringBuilder sb = open(title);
        axes(sb, new double[0], yt, 0, 1, 0, y1, "", yLabel);
        double groupW = (W - LEFT - RIGHT) / (double) categories.size();
        double barW = Math.max(1, groupW * 0.8 / seriesNames.size());
        for (int c = 0; c < categories.size(); c++) {
            double gx = LEFT + c * groupW + groupW * 0.1;
            for (int s = 0; s < seriesNames.size(); s++) {
                double v = values[s][c];
                if (!Double.isFinite(v)) {
                    continue;
                }
                double top = py(v, 0, y1);
                sb.append("<rect fill=\"").append(PALETTE[s % PALETTE.length]).append("\" x=\"").append(f(gx + s * barW))
                        .append("\" y=\"").append(f(top)).append("\" width=\"").append(f(barW - 1)).append("\" height=\"")
                        .append(f(H - BOTTOM - top)).append("\"><title>").append(esc(categories.get(c) + " " + seriesNames.get(s)
                                + ": " + label(v))).append("</title></rect>");
            }
            sb.append("<text font-size=\"11\" text-anchor=\"middle\" x=\"").append(f(gx + groupW * 0.4)).append("\" y=\"")
                    .append(H - BOTTOM + 16).append("\">").append(esc(shorten(categories.get(c)))).append("</text>");
        }
        if (seriesNames.size() > 1) {
            legend(sb, seriesNames);
        }
        return sb.append("</svg>").toString();
    }

    /** Every k-th index so that at most {@code max} remain (always including the last). */
    static int stride(int n, int max) {
        return Math.max(1, (int) Math.ceil(n / (double) max));
    }

    private static StringBuilder open(String title) {
        StringBuilder sb = new StringBuilder(4096);
        sb.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(W).append("\" height=\"").append(H)
                .append("\" viewBox=\"0 0 ").append(W).append(' ').append(H).append("\" font-family=\"sans-serif\">")
                .append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>")
                .append("<text x=\"").append(W / 2).append("\" y=\"20\" font-size=\"14\" text-anchor=\"middle\" font-weight=\"bold\">")
                .append(esc(title)).append("</text>");
        return sb;
    }

    private static String empty(String title) {
        return open(title).append("<text x=\"").append(W / 2).append("\" y=\"").append(H / 2)
                .append("\" text-anchor=\"middle\" fill=\"#888\">no data</text></svg>").toString();
    }

    private static void axes(StringBuilder sb, double[] xt, double[] yt, double x0, double x1, double y0, double y1,
                             String xLabel, String yLabel) {
        sb.append("<g stroke=\"#ddd\">");
        for (double y : yt) {
            sb.append("<line x1=\"").append(LEFT).append("\" x2=\"").append(W - RIGHT).append("\" y1=\"").append(f(py(y, y0, y1)))
                    .append("\" y2=\"").append(f(py(y, y0, y1))).append("\"/>");
        }
        sb.append("</g><g font-size=\"11\" fill=\"#333\">");
        for (double y : yt) {
            sb.append("<text text-anchor=\"end\" x=\"").append(LEFT - 6).append("\" y=\"").append(f(py(y, y0, y1) + 4)).append("\">")
                    .append(label(y)).append("</text>");
        }
        for (double x : xt) {
            sb.append("<text text-anchor=\"middle\" x=\"").append(f(px(x, x0, x1))).append("\" y=\"").append(H - BOTTOM + 16)
                    .append("\">").append(label(x)).append("</text>");
        }
        sb.append("</g><line stroke=\"#333\" x1=\"").append(LEFT).append("\" x2=\"").append(W - RIGHT).append("\" y1=\"")
                .append(H - BOTTOM).append("\" y2=\"").append(H - BOTTOM).append("\"/><line stroke=\"#333\" x1=\"").append(LEFT)
                .append("\" x2=\"").append(LEFT).append("\" y1=\"").append(TOP).append("\" y2=\"").append(H - BOTTOM).append("\"/>");
        sb.append("<text font-size=\"12\" text-anchor=\"middle\" x=\"").append((LEFT + W - RIGHT) / 2).append("\" y=\"").append(H - 12)
                .append("\">").append(esc(xLabel)).append("</text>");
        sb.append("<text font-size=\"12\" text-anchor=\"middle\" transform=\"translate(16,").append((TOP + H - BOTTOM) / 2)
                .append(") rotate(-90)\">").append(esc(yLabel)).append("</text>");
    }

    private static void legend(StringBuilder sb, List<String> names) {
        int x = LEFT + 10;
        for (int k = 0; k < names.size(); k++) {
            sb.append("<rect x=\"").append(x).append("\" y=\"").append(TOP - 20).append("\" width=\"10\" height=\"10\" fill=\"")
                    .append(PALETTE[k % PALETTE.length]).append("\"/><text font-size=\"11\" x=\"").append(x + 14).append("\" y=\"")
                    .append(TOP - 11).append("\">").append(esc(names.get(k))).append("</text>");
            x += 24 + 7 * names.get(k).length();
        }
    }

    /** About five round ticks from lo to at least hi. */
    static double[] ticks(double lo, double hi) {
        if (!(hi > lo)) {
            hi = lo + 1;
        }
        double raw = (hi - lo) / 5;
        double mag = Math.pow(10, Math.floor(Math.log10(raw)));
        double step = raw / mag < 1.5 ? mag : raw / mag < 3 ? 2 * mag : raw / mag < 7 ? 5 * mag : 10 * mag;
        double start = Math.floor(lo / step) * step;
        int n = (int) Math.ceil((hi - start) / step - 1e-9) + 1;
        double[] t = new double[Math.max(2, n)];
        for (int i = 0; i < t.length; i++) {
            t[i] = start + i * step;
        }
        return t;
    }

    private static double px(double x, double x0, double x1) {
        return LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT);
    }

    private static double py(double y, double y0, double y1) {
        return H - BOTTOM - (y - y0) / (y1 - y0) * (H - TOP - BOTTOM);
    }

    /** Three significant digits without trailing zeros; k and M above 10 000. */
    static String label(double v) {
        double a = Math.abs(v);
        if (a >= 1e6) {
            return trim(v / 1e6) + "M";
        }
        if (a >= 1e4) {
            return trim(v / 1e3) + "k";
        }
        return trim(v);
    }

    private static String trim(double v) {
        if (Math.abs(v) < 1e-12) {
            return "0";
        }
        return new java.math.BigDecimal(String.format(Locale.ROOT, "%.3g", v)).stripTrailingZeros().toPlainString();
    }

    private static String f(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static String shorten(String s) {
        return s.length() <= 18 ? s : s.substring(0, 17) + "…";
    }

    static String esc(String s) {
        return s == null ? "" : s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
