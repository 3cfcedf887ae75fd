package io.flotilla.bench.report;

import java.util.List;

/** Page skeleton and tables shared by the run and compare reports; everything inline. */
final class Html {

    private static final String STYLE = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1600px}"
            + "table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}"
            + "th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}"
            + ".charts{display:flex;flex-wrap:wrap;gap:12px}.note{color:#666;font-size:13px;max-width:900px}"
            + ".better{color:#1a7f37}.worse{color:#b42318}";

    private Html() {
    }

    static StringBuilder page(String title) {
        return new StringBuilder(1 << 16).append("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>")
                .append(SvgChart.esc(title)).append("</title><style>").append(STYLE).append("</style></head><body><h1>")
                .append(SvgChart.esc(title)).append("</h1>");
    }

    static String end(StringBuilder sb) {
        return sb.append("</body></html>\n").toString();
    }

    /** A table; cells are escaped unless they start with {@code <span}. */
    static void table(StringBuilder sb, List<String> header, List<List<String>> rows) {
        sb.append("<table><tr>");
        header.forEach(h -> sb.append("<th>").append(SvgChart.esc(h)).append("</th>"));
        sb.append("</tr>");
        for (List<String> row : rows) {
            sb.append("<tr>");
            row.forEach(c -> sb.append("<td>").append(c != null && c.startsWith("<span") ? c : SvgChart.esc(c)).append("</td>"));
            sb.append("</tr>");
        }
        sb.append("</table>");
    }
}
