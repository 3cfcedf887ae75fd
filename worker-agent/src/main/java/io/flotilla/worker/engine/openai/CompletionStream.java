package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.DeadlineExceededException;
import io.flotilla.worker.engine.EngineException;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.TokenLogprob;
import io.flotilla.worker.engine.TokenSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One request streaming from an engine server: relays the SSE {@code data:} payloads of its generation
 * stream ({@code /v1/completions}, SGLang's {@code /generate}), decoded by the request's
 * {@link ChunkDecoder}, to a {@link TokenSink}, and times it for the engine's learned timing.
 *
 * <p>Contract: the sink gets zero or more {@code onTokens}, then exactly one of {@code onFinish} or
 * {@code onError}, never overlapping (every sink call happens under this object's lock).
 * {@link #cancel()} disposes the subscription, which closes the HTTP stream (the engine aborts the
 * request when its client goes away), and finishes with {@code CANCELLED}. A sink that throws is a
 * gone client: the stream is closed and the sink hears nothing more. {@code onEnd} runs once, before
 * the terminal call (what the request held, such as its LoRA adapter, is free by the time a client
 * that starts its next request on hearing the finish asks again); {@code onDone} runs once, after it.
 */
final class CompletionStream implements RequestHandle {

    static final String DONE = "[DONE]";
    private static final Logger log = LoggerFactory.getLogger(CompletionStream.class);
    private static final AtomicBoolean WARNED_NO_IDS = new AtomicBoolean();

    private final EngineRequest request;
    private final TokenSink sink;
    private final ChunkDecoder decoder;
    private final Runnable onEnd;
    private final Runnable onDone;
    private RequestClock clock;
    private Disposable subscription;
    private Disposable deadlineTimer;
    private boolean done;
    private int completionTokens;
    private String finishReason;
    private CompletionChunk.Usage usage;
    private volatile boolean generating;

    CompletionStream(EngineRequest request, TokenSink sink, ChunkDecoder decoder, Runnable onEnd, Runnable onDone) {
        this.request = request;
        this.sink = sink;
        this.decoder = decoder;
        this.onEnd = onEnd;
        this.onDone = onDone;
    }

    /** Times this request (set before {@link #start}); without one it is not timed. */
    synchronized void timeWith(RequestClock clock) {
        this.clock = clock;
    }

    /**
     * Subscribes to the stream's data payloads.
     *
     * @param untilDeadline time left before the request's deadline, or null for none
     */
    synchronized void start(Flux<String> data, Duration untilDeadline) {
        if (untilDeadline != null) {
            if (untilDeadline.isNegative() || untilDeadline.isZero()) {
                fail(new DeadlineExceededException("deadline passed before the request was sent"));
                return;
            }
            deadlineTimer = Mono.delay(untilDeadline)
                    .subscribe(x -> fail(new DeadlineExceededException("deadline passed while the engine was generating")));
        }
        subscription = data.subscribe(this::onData, e -> fail(EngineHttpErrors.forFailure(e)), this::onComplete);
        if (done) {
            subscription.dispose();
        }
    }

    @Override
    public String requestId() {
        return request.requestId();
    }

    EngineRequest request() {
        return request;
    }

    /** Whether the engine has started answering (prefill done); until then the prompt counts as waiting prefill. */
    boolean generating() {
        return generating;
    }

    @Override
    public synchronized void cancel() {
        if (done) {
            return;
        }
        end();
        try {
            sink.onFinish(FinishReason.FINISH_REASON_CANCELLED, promptTokens(), usage == null ? 0 : usage.cachedTokens(),
                    completionTokens());
        } catch (RuntimeException e) {
            // a gone client: nothing more to tell it
        }
        onDone.run();
    }

    /** Ends the request with an error (engine failure, deadline, engine closed). */
    synchronized void fail(EngineException error) {
        if (done) {
            return;
        }
        end();
        try {
            sink.onError(error);
        } catch (RuntimeException e) {
            // a gone client
        }
        onDone.run();
    }

    private synchronized void onData(String data) {
        if (done) {
            return;
        }
        if (DONE.equals(data.strip())) {
            finish();
            return;
        }
        CompletionChunk chunk;
        try {
            chunk = decoder.decode(data);
        } catch (RuntimeException e) {
            fail(new EngineUnavailableException("malformed stream chunk from the engine: " + e.getMessage()));
            return;
        }
        if (chunk.error() != null) {
            fail(chunk.error());
            return;
        }
        completionTokens += chunk.countedTokens();
        if (chunk.usage() != null) {
            usage = chunk.usage();
        }
        if (chunk.finishReason() != null) {
            finishReason = chunk.finishReason();
        }
        if (chunk.hasChoice()) {
            generating = true;
            if (chunk.tokenIds() == null && chunk.finishReason() == null && !WARNED_NO_IDS.getAndSet(true)) {
                log.warn("the engine streams text without token ids: tokens are counted but cannot be relayed "
                        + "(vLLM needs 0.10 or later for return_token_ids; see worker-agent/ENGINES.md)");
            }
        }
        if (chunk.tokenIds() != null && chunk.tokenIds().length > 0) {
            if (clock != null) {
                clock.tokens();
            }
            try {
                if (request.options().logprobs()) {
                    if (chunk.logprobs() == null) {
                        fail(new EngineUnavailableException("the engine returned tokens without the logprobs asked for"));
                        return;
                    }
                    sink.onTokens(chunk.tokenIds(), mostLikely(chunk.logprobs(), request.options().topLogprobs()));
                } else {
                    sink.onTokens(chunk.tokenIds());
                }
            } catch (RuntimeException e) {
                end();
                onDone.run();
            }
        }
    }

    /**
     * The alternatives of each token sorted most likely first and cut to {@code n}: vLLM adds the sampled
     * token to {@code top_logprobs} when it is not among the n most likely.
     */
    static TokenLogprob[] mostLikely(TokenLogprob[] logprobs, int n) {
        TokenLogprob[] out = new TokenLogprob[logprobs.length];
        for (int i = 0; i < logprobs.length; i++) {
            TokenLogprob lp = logprobs[i];
            Integer[] order = new Integer[lp.topIds().length];
            for (int k = 0; k < order.length; k++) {
                order[k] = k;
            }
            java.util.Arrays.sort(order, (a, b) -> Float.compare(lp.topLogprobs()[b], lp.topLogprobs()[a]));
            int keep = Math.min(n, order.length);
            int[] ids = new int[keep];
            float[] lps = new float[keep];
            for (int k = 0; k < keep; k++) {
                ids[k] = lp.topIds()[order[k]];
                lps[k] = lp.topLogprobs()[order[k]];
            }
            out[i] = new TokenLogprob(lp.logprob(), ids, lps);
        }
        return out;
    }

    private synchronized void onComplete() {
        if (!done) {
            finish(); // a server that closes without [DONE]: fine when a finish reason arrived
        }
    }

    private void finish() {
        if (finishReason == null) {
            fail(new EngineUnavailableException("engine stream ended without a finish reason after "
                    + completionTokens() + " tokens"));
            return;
        }
        end();
        if (clock != null) {
            clock.finished(promptTokens() - (usage == null ? 0 : usage.cachedTokens()), completionTokens());
        }
        try {
            sink.onFinish(CompletionChunk.finishReason(finishReason), promptTokens(),
                    usage == null ? 0 : usage.cachedTokens(), completionTokens());
        } catch (RuntimeException e) {
            // a gone client
        }
        onDone.run();
    }

    private void end() {
        if (!done) {
            done = true;
            onEnd.run();
        }
        if (subscription != null) {
            subscription.dispose();
        }
        if (deadlineTimer != null) {
            deadlineTimer.dispose();
        }
    }

    private int promptTokens() {
        return usage != null && usage.promptTokens() > 0 ? usage.promptTokens() : request.promptTokens().length;
    }

    private int completionTokens() {
        return usage != null ? usage.completionTokens() : completionTokens;
    }
}
