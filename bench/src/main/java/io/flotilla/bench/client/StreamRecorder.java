package io.flotilla.bench.client;

import io.flotilla.protocol.sse.SseDecoder;

import java.net.http.HttpHeaders;
import java.net.http.HttpTimeoutException;
import java.util.Arrays;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * Client-side measurement of one streaming completion, fed line by line as the body arrives.
 *
 * <p>Definitions (all from the client's clock, starting when the request was handed to the HTTP client):
 * <ul>
 *   <li>TTFT: arrival of the first content chunk ({@link StreamEvent.Chunk#content()}).</li>
 *   <li>Inter-token gaps: time between consecutive content chunks. A chunk carrying several tokens
 *       is one gap, so the gap list describes the stream as the client saw it.</li>
 *   <li>Mean ITL (per token): {@code (last content chunk − first content chunk) / (tokens − 1)} where
 *       tokens is {@code usage.completion_tokens} (or the tokens counted in the stream when usage is
 *       missing); it does not depend on how tokens were packed into chunks. NaN with fewer than two
 *       content chunks.</li>
 *   <li>E2E: end of the response body (or failure).</li>
 * </ul>
 * Serving workers come from the {@code x-flotilla-worker} and {@code x-flotilla-prefill-worker}
 * response headers. Flow calls arrive serially; {@link #finish} is called once, after the body ended or the
 * request timed out, and later lines are ignored.
 */
public final class StreamRecorder implements Flow.Subscriber<String> {

    public static final String WORKER_HEADER = "x-flotilla-worker";
    public static final String PREFILL_WORKER_HEADER = "x-flotilla-prefill-worker";
    public static final String QUEUE_MS_HEADER = "x-flotilla-queue-ms";
    public static final String MODE_HEADER = "x-flotilla-mode";
    private static final java.util.regex.Pattern ERROR_CODE = java.util.regex.Pattern.compile("\"code\"\\s*:\\s*\"([^\"]*)\"");

    /** Told about streamed tokens as they arrive (live throughput). */
    public interface TokenSink {
        void tokens(long nanos, int count);
    }

    private final long startNanos;
    private final LongSupplier clock;
    private final boolean keepTokenIds;
    private final TokenSink sink;
    private final SseDecoder decoder = new SseDecoder(this::onEvent);

    private volatile Flow.Subscription subscription;
    private volatile boolean cancelled;
    private int status;
    private String worker = "";
    private String prefillWorker = "";
    private double queueMs = Double.NaN;
    private String mode = "";
    private String httpErrorBody;
    private long firstContent = -1;
    private long lastContent = -1;
    private int chunks;
    private int streamedTokens;
    private float[] gaps = new float[16];
    private int gapCount;
    private int[] tokenIds = new int[0];
    private int tokenIdCount;
    private StreamEvent.Usage usage;
    private String failure;
    private boolean done;
    private boolean finished;
    private boolean aborted;
    private Runnable abortHook;

    public StreamRecorder(long startNanos, LongSupplier clock, boolean keepTokenIds, TokenSink sink) {
        this.startNanos = startNanos;
        this.clock = clock;
        this.keepTokenIds = keepTokenIds;
        this.sink = sink;
    }

    /** Status line and headers, before any body. */
    public void onResponse(int status, HttpHeaders headers) {
        this.status = status;
        this.worker = headers.firstValue(WORKER_HEADER).orElse("");
        this.prefillWorker = headers.firstValue(PREFILL_WORKER_HEADER).orElse("");
        this.mode = headers.firstValue(MODE_HEADER).orElse("");
        this.queueMs = headers.firstValue(QUEUE_MS_HEADER).map(v -> {
            try {
                return Double.parseDouble(v);
            } catch (NumberFormatException e) {
                return Double.NaN;
            }
        }).orElse(Double.NaN);
    }

    /** Body of a non-200 response. */
    public void onHttpErrorBody(String body) {
        this.httpErrorBody = body;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        if (cancelled) {
            s.cancel();
        } else {
            s.request(Long.MAX_VALUE);
        }
    }

    @Override
    public synchronized void onNext(String line) {
        if (!finished) {
            decoder.line(line, clock.getAsLong());
        }
    }

    @Override
    public synchronized void onError(Throwable t) {
        if (!finished) {
            decoder.end();
        }
    }

    @Override
    public synchronized void onComplete() {
        if (!finished) {
            decoder.end();
        }
    }

    /** Stops reading the body (timeout); the connection is closed by the HTTP client. */
    public void cancel() {
        cancelled = true;
        Flow.Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
    }

    /** Registers what {@link #abort()} does (the sender completes the request as cancelled). */
    public void onAbort(Runnable hook) {
        boolean now;
        synchronized (this) {
            abortHook = hook;
            now = aborted;
        }
        if (now) {
            hook.run();
        }
    }

    /** Ends the request now, as {@code cancelled} (the run was stopped). */
    public void abort() {
        Runnable hook;
        synchronized (this) {
            aborted = true;
            hook = abortHook;
        }
        cancel();
        if (hook != null) {
            hook.run();
        }
    }

    void onEvent(String type, String data, long nanos) {
        StreamEvent e = StreamEvent.parse(type, data);
        if (e instanceof StreamEvent.Done) {
            done = true;
        } else if (e instanceof StreamEvent.Failure f) {
            if (failure == null) {
                failure = f.message();
            }
        } else if (e instanceof StreamEvent.Chunk c) {
            if (c.usage() != null) {
                usage = c.usage();
            }
            if (c.content()) {
                content(c, nanos);
            }
        }
    }

    private void content(StreamEvent.Chunk c, long nanos) {
        if (firstContent < 0) {
            firstContent = nanos;
        } else {
            if (gapCount == gaps.length) {
                gaps = Arrays.copyOf(gaps, gapCount * 2);
            }
            gaps[gapCount++] = (float) ((nanos - lastContent) / 1e6);
        }
        lastContent = nanos;
        chunks++;
        streamedTokens += c.tokens();
        if (keepTokenIds && c.tokenIds() != null) {
            if (tokenIdCount + c.tokenIds().length > tokenIds.length) {
                tokenIds = Arrays.copyOf(tokenIds, Math.max(tokenIds.length * 2, tokenIdCount + c.tokenIds().length));
            }
            System.arraycopy(c.tokenIds(), 0, tokenIds, tokenIdCount, c.tokenIds().length);
            tokenIdCount += c.tokenIds().length;
        }
        sink.tokens(nanos, c.tokens());
    }

    /** The measurement; {@code error} is what ended the exchange abnormally, or null. */
    public synchronized StreamMeasurement finish(Throwable error) {
        finished = true;
        long end = clock.getAsLong();
        String outcome;
        String message = null;
        Throwable cause = unwrap(error);
        if (cause instanceof CancellationException) {
            outcome = "cancelled";
            message = "run stopped before the response ended";
        } else if (cause instanceof HttpTimeoutException || cause instanceof TimeoutException) {
            outcome = "timeout";
            message = "no complete response within the request timeout";
        } else if (cause != null) {
            outcome = "io_error";
            message = cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
        } else if (status != 200) {
            outcome = "http_" + status;
            message = httpErrorBody == null ? null : abbreviate(httpErrorBody.strip());
        } else if (failure != null) {
            outcome = "error";
            message = failure;
        } else if (!done && usage == null) {
            outcome = "incomplete";
            message = "stream ended without [DONE] or usage";
        } else {
            outcome = "ok";
        }
        int completion = usage != null ? usage.completionTokens() : streamedTokens;
        double ttft = firstContent < 0 ? Double.NaN : ms(firstContent - startNanos);
        double itlMean = chunks < 2 ? Double.NaN : ms(lastContent - firstContent) / Math.max(1, Math.max(completion, chunks) - 1);
        double itlMax = 0;
        for (int i = 0; i < gapCount; i++) {
            itlMax = Math.max(itlMax, gaps[i]);
        }
        String code = "";
        String errorText = status != 200 ? httpErrorBody : failure;
        if (errorText != null) {
            java.util.regex.Matcher m = ERROR_CODE.matcher(errorText);
            if (m.find()) {
                code = m.group(1);
            }
        }
        return new StreamMeasurement(outcome, status, message, ttft, ms(end - startNanos), itlMean,
                gapCount == 0 ? Double.NaN : itlMax, Arrays.copyOf(gaps, gapCount), chunks, streamedTokens, usage,
                worker, prefillWorker, Arrays.copyOf(tokenIds, tokenIdCount), queueMs, mode, code);
    }

    private static Throwable unwrap(Throwable t) {
        while (t != null && t.getCause() != null
                && (t instanceof java.util.concurrent.CompletionException || t instanceof java.util.concurrent.ExecutionException)) {
            t = t.getCause();
        }
        return t;
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    private static String abbreviate(String s) {
        return s.length() <= 300 ? s : s.substring(0, 300) + "…";
    }
}
