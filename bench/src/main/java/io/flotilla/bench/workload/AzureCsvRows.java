package io.flotilla.bench.workload;

import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.Locale;

/**
 * Rows of the Azure LLM inference trace CSV ({@code TIMESTAMP,ContextTokens,GeneratedTokens}).
 * {@code TIMESTAMP} is either a date-time — {@code 2023-11-16 18:15:46.6805900} as published (up to 9
 * fraction digits, space or {@code T}, optional offset or {@code Z}; without an offset it is read as
 * UTC) — or a plain number, in units of {@code numberUnitMs} milliseconds (seconds by default).
 * Other columns are ignored; fields are not quoted in this format, but surrounding quotes are stripped.
 */
final class AzureCsvRows {

    private static final DateTimeFormatter DATE_TIME = new DateTimeFormatterBuilder()
            .parseCaseInsensitive()
            .appendPattern("yyyy-MM-dd")
            .optionalStart().appendLiteral(' ').optionalEnd()
            .optionalStart().appendLiteral('T').optionalEnd()
            .appendPattern("HH:mm:ss")
            .optionalStart().appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true).optionalEnd()
            .optionalStart().appendOffset("+HH:MM", "Z").optionalEnd()
            .optionalStart().appendOffset("+HHMM", "Z").optionalEnd()
            .toFormatter(Locale.ROOT);

    private final double numberUnitMs;
    private int tsCol = -1;
    private int inCol = -1;
    private int outCol = -1;
    private int columns;

    AzureCsvRows(double numberUnitMs) {
        this.numberUnitMs = numberUnitMs;
    }

    boolean hasHeader() {
        return columns > 0;
    }

    void header(String line, String where) {
        String[] names = split(line);
        for (int i = 0; i < names.length; i++) {
            switch (names[i].toLowerCase(Locale.ROOT)) {
                case "timestamp" -> tsCol = i;
                case "contexttokens" -> inCol = i;
                case "generatedtokens" -> outCol = i;
                default -> { }
            }
        }
        if (tsCol < 0 || inCol < 0 || outCol < 0) {
            throw new IllegalArgumentException(where + ": CSV header must name TIMESTAMP, ContextTokens and "
                    + "GeneratedTokens (or the file is not a trace); got: " + line);
        }
        columns = names.length;
    }

    TraceRow parse(String line, long row, String where) {
        String[] f = split(line);
        if (f.length <= Math.max(tsCol, Math.max(inCol, outCol))) {
            throw new IllegalArgumentException(where + ": expected " + columns + " columns, got " + f.length);
        }
        try {
            double ms = timestampMs(f[tsCol]);
            int in = (int) Double.parseDouble(f[inCol]);
            int out = (int) Double.parseDouble(f[outCol]);
            return new TraceRow(row, ms, in, out, null);
        } catch (NumberFormatException | DateTimeParseException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage());
        }
    }

    double timestampMs(String s) {
        if (!s.isEmpty() && (Character.isDigit(s.charAt(0)) || s.charAt(0) == '.') && s.indexOf('-') < 0) {
            return Double.parseDouble(s) * numberUnitMs;
        }
        var parsed = DATE_TIME.parseBest(s, OffsetDateTime::from, LocalDateTime::from);
        OffsetDateTime t = parsed instanceof OffsetDateTime o ? o : ((LocalDateTime) parsed).atOffset(ZoneOffset.UTC);
        return t.toEpochSecond() * 1000.0 + t.getNano() / 1_000_000.0;
    }

    private static String[] split(String line) {
        String[] f = line.split(",", -1);
        for (int i = 0; i < f.length; i++) {
            String v = f[i].strip();
            if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
                v = v.substring(1, v.length() - 1).strip();
            }
            f[i] = v;
        }
        return f;
    }
}
