package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.TokenLogprob;
import io.flotilla.worker.engine.TokenSink;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A token sink that records a request's output, checks the callback-order contract and can be awaited. */
public final class AwaitingSink implements TokenSink {

    /** The terminal callback: a finish (error null) or an error (reason null). */
    public record End(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens, Throwable error) {
    }

    private final List<Integer> tokens = new ArrayList<>();
    private final List<TokenLogprob> logprobs = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private final CompletableFuture<End> end = new CompletableFuture<>();

    @Override
    public synchronized void onTokens(int[] out) {
        if (end.isDone()) {
            violations.add("tokens after the end");
        }
        for (int t : out) {
            tokens.add(t);
        }
    }

    @Override
    public synchronized void onTokens(int[] out, TokenLogprob[] lps) {
        onTokens(out);
        logprobs.addAll(List.of(lps));
    }

    synchronized List<TokenLogprob> logprobs() {
        return List.copyOf(logprobs);
    }

    @Override
    public synchronized void onFinish(FinishReason reason, int prompt, int cached, int completion) {
        terminal(new End(reason, prompt, cached, completion, null));
    }

    @Override
    public synchronized void onError(Throwable error) {
        terminal(new End(null, 0, 0, 0, error));
    }

    private void terminal(End e) {
        if (!end.complete(e)) {
            violations.add("second terminal callback: " + e);
        }
    }

    public End await() {
        return await(Duration.ofSeconds(10));
    }

    public End await(Duration timeout) {
        try {
            return end.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new AssertionError("request did not end: " + e, e);
        }
    }

    boolean ended() {
        return end.isDone();
    }

    synchronized int tokenCount() {
        return tokens.size();
    }

    public synchronized List<Integer> tokens() {
        return List.copyOf(tokens);
    }

    public synchronized List<String> violations() {
        return List.copyOf(violations);
    }
}
