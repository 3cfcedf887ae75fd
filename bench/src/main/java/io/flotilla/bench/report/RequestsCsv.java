package io.flotilla.bench.report;

import io.flotilla.bench.run.RequestResult;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * {@code requests.csv}: one row per sent request, in send order. Empty cells mean "not measured"
 * (no content chunk, no usage). Text cells are quoted when they contain a comma, quote or newline.
 */
public final class RequestsCsv {

    public static final List<String> COLUMNS = List.of("id", "session", "turn", "scheduled_ms", "sent_ms", "prompt_len",
            "max_tokens", "outcome", "http_status", "ttft_ms", "e2e_ms", "itl_mean_ms", "itl_max_ms", "chunks",
            "prompt_tokens", "cached_tokens", "completion_tokens", "oracle_cached_tokens", "worker", "prefill_worker", "tenant", "priority", "queue_ms", "mode", "error_code", "error");

    private RequestsCsv() {
    }

    public static void write(Path file, List<RequestResult> rows) throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write(String.join(",", COLUMNS));
            w.write('\n');
            for (RequestResult r : rows) {
                w.write(row(r));
                w.write('\n');
            }
        }
    }

    static String row(RequestResult r) {
        return String.join(",",
                Long.toString(r.id()),
                r.session() < 0 ? "" : Long.toString(r.session()),
                Integer.toString(r.turn()),
                ms(r.scheduledMs()),
                ms(r.sentMs()),
                Integer.toString(r.promptLen()),
                Integer.toString(r.maxTokens()),
                r.outcome(),
                r.httpStatus() == 0 ? "" : Integer.toString(r.httpStatus()),
                ms(r.ttftMs()),
                ms(r.e2eMs()),
                ms(r.itlMeanMs()),
                ms(r.itlMaxMs()),
                Integer.toString(r.chunks()),
                r.promptTokens() < 0 ? "" : Integer.toString(r.promptTokens()),
                r.cachedTokens() < 0 ? "" : Integer.toString(r.cachedTokens()),
                Integer.toString(r.completionTokens()),
                Integer.toString(r.oracleCachedTokens()),
                text(r.worker()),
                text(r.prefillWorker()),
                text(r.tenant()),
                text(r.priority()),
                ms(r.queueMs()),
                text(r.mode()),
                text(r.errorCode()),
                text(r.error()));
    }

    private static String ms(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.3f", v);
    }

    static String text(String s) {
        if (s == null) {
            return "";
        }
        if (s.indexOf(',') >= 0 || s.indexOf('"') >= 0 || s.indexOf('\n') >= 0 || s.indexOf('\r') >= 0) {
            return '"' + s.replace("\"", "\"\"") + '"';
        }
        return s;
    }
}
