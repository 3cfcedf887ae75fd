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
                r.sent().session() < 0 ? "" : Long.toString(r.sent().session()),
                Integer.toString(r.sent().turn()),
                ms(r.sent().scheduledMs()),
                ms(r.sent().sentMs()),
                Integer.toString(r.sent().promptLen()),
                Integer.toString(r.sent().maxTokens()),
                r.end().outcome(),
                r.end().httpStatus() == 0 ? "" : Integer.toString(r.end().httpStatus()),
                ms(r.timing().ttftMs()),
                ms(r.timing().e2eMs()),
                ms(r.timing().itlMeanMs()),
                ms(r.timing().itlMaxMs()),
                Integer.toString(r.timing().chunks()),
                r.usage().promptTokens() < 0 ? "" : Integer.toString(r.usage().promptTokens()),
                r.usage().cachedTokens() < 0 ? "" : Integer.toString(r.usage().cachedTokens()),
                Integer.toString(r.usage().completionTokens()),
                Integer.toString(r.sent().oracleCachedTokens()),
                text(r.placement().worker()),
                text(r.placement().prefillWorker()),
                text(r.sent().tenant()),
                text(r.sent().priority()),
                ms(r.timing().queueMs()),
                text(r.placement().mode()),
                text(r.end().errorCode()),
                text(r.end().error()));
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
