package io.flotilla.bench.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * Streams a trace file row by row; nothing but the current line is held, so a full-size trace
 * replays in constant memory. Formats:
 * <ul>
 *   <li>Mooncake JSONL: one object per line with {@code timestamp} (ms), {@code input_length},
 *       {@code output_length}, {@code hash_ids}; blank lines are skipped.</li>
 *   <li>Azure LLM inference CSV: header naming {@code TIMESTAMP}, {@code ContextTokens},
 *       {@code GeneratedTokens} in any order and case ({@link AzureCsvRows}).</li>
 * </ul>
 * Arrival times are made relative to the first row. A row that goes back in time is clamped to the
 * previous arrival, so arrivals never decrease. Malformed rows fail with the line number.
 */
public final class TraceReader implements Iterator<TraceRow>, AutoCloseable {

    public enum Format { AUTO, MOONCAKE, AZURE }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final BufferedReader in;
    private final String source;
    private final AzureCsvRows csv;
    private long lineNo;
    private long rows;
    private double firstMs = Double.NaN;
    private double lastArrival;
    private TraceRow next;

    private TraceReader(BufferedReader in, String source, Format format, double csvNumberUnitMs) throws IOException {
        this.in = in;
        this.source = source;
        Format actual = format == Format.AUTO ? detect(firstNonBlankChar(in)) : format;
        this.csv = actual == Format.AZURE ? new AzureCsvRows(csvNumberUnitMs) : null;
    }

    /** Opens a file; {@code csvNumberUnitMs} is the length in ms of one unit of a numeric CSV timestamp. */
    public static TraceReader open(Path file, Format format, double csvNumberUnitMs) {
        try {
            BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8);
            return new TraceReader(r, file.toString(), format, csvNumberUnitMs);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read trace " + file + ": " + e.getMessage(), e);
        }
    }

    public static TraceReader of(Reader reader, String source, Format format, double csvNumberUnitMs) {
        try {
            return new TraceReader(new BufferedReader(reader, 1 << 16), source, format, csvNumberUnitMs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** JSONL when the first non-blank character opens an object, CSV otherwise. */
    static Format detect(int firstChar) {
        return firstChar == '{' ? Format.MOONCAKE : Format.AZURE;
    }

    @Override
    public boolean hasNext() {
        if (next == null) {
            next = readRow();
        }
        return next != null;
    }

    @Override
    public TraceRow next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        TraceRow r = next;
        next = null;
        return r;
    }

    private TraceRow readRow() {
        try {
            String line;
            while ((line = in.readLine()) != null) {
                lineNo++;
                if (lineNo == 1 && line.startsWith("\uFEFF")) {
                    line = line.substring(1);
                }
                if (line.isBlank()) {
                    continue;
                }
                if (csv != null && !csv.hasHeader()) {
                    csv.header(line, where());
                    continue;
                }
                TraceRow raw = csv != null ? csv.parse(line, rows, where()) : mooncake(line);
                return relative(raw);
            }
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read trace " + source + ": " + e.getMessage(), e);
        }
    }

    private TraceRow relative(TraceRow raw) {
        if (Double.isNaN(firstMs)) {
            firstMs = raw.arrivalMs();
        }
        double arrival = Math.max(lastArrival, raw.arrivalMs() - firstMs);
        lastArrival = arrival;
        rows++;
        return new TraceRow(raw.row(), arrival, raw.inputLength(), raw.outputLength(), raw.hashIds());
    }

    private TraceRow mooncake(String line) {
        JsonNode n;
        try {
            n = JSON.readTree(line);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(where() + ": not JSON: " + e.getOriginalMessage());
        }
        JsonNode ts = n.get("timestamp");
        JsonNode in = n.get("input_length");
        JsonNode out = n.get("output_length");
        JsonNode ids = n.get("hash_ids");
        if (ts == null || !ts.isNumber() || in == null || !in.canConvertToInt() || out == null || !out.canConvertToInt()) {
            throw new IllegalArgumentException(where() + ": needs numeric timestamp, input_length and output_length");
        }
        long[] hashIds = new long[ids == null ? 0 : ids.size()];
        for (int i = 0; i < hashIds.length; i++) {
            JsonNode id = ids.get(i);
            if (!id.canConvertToLong()) {
                throw new IllegalArgumentException(where() + ": hash_ids[" + i + "] is not an integer");
            }
            hashIds[i] = id.asLong();
        }
        return new TraceRow(rows, ts.asDouble(), in.asInt(), out.asInt(), hashIds);
    }

    private String where() {
        return source + ":" + lineNo;
    }

    /** The first non-whitespace character (or -1), leaving the reader where it was. */
    private static int firstNonBlankChar(BufferedReader r) throws IOException {
        r.mark(1 << 16);
        int c;
        int seen = 0;
        do {
            c = r.read();
        } while (c >= 0 && (Character.isWhitespace(c) || c == '\uFEFF') && ++seen < (1 << 16) - 1);
        r.reset();
        return c;
    }

    @Override
    public void close() {
        try {
            in.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
