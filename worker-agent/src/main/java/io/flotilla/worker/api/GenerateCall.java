package io.flotilla.worker.api;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.TokenLogprobs;
import io.flotilla.protocol.v1.Usage;
import io.flotilla.worker.engine.TokenLogprob;
import io.flotilla.worker.engine.TokenSink;

/**
 * Relays one choice's engine output to its Generate's replies: a chunk per step (with the tokens'
 * log-probabilities when the engine reports them), then a final chunk with finish reason and usage.
 * Runs on the engine thread and never blocks (the transport buffers the replies). After the client cancelled,
 * nothing more is written. Every chunk says whether the request continues a KV handoff and which
 * choice it belongs to; the last one also why a handoff was refused.
 */
final class GenerateCall implements TokenSink {

    private final GenerateOutput out;
    private final int choice;
    private final String workerId;
    private final GenerationMeters metrics;
    private final boolean handoffUsed;
    private final int importedTokens;
    private final String handoffRefusedReason;
    private Runnable onFirstTokens;

    /** A request prefilled here; {@code handoffRefusedReason} is empty unless a handoff was refused. */
    GenerateCall(Replies<GenerateChunk> stream, String workerId, GenerationMeters metrics,
                 String handoffRefusedReason) {
        this(new GenerateOutput(stream, 1), 0, workerId, metrics, false, 0, handoffRefusedReason);
    }

    /** A request continuing a handoff whose blocks brought {@code importedTokens} prompt tokens here. */
    GenerateCall(Replies<GenerateChunk> stream, String workerId, GenerationMeters metrics,
                 int importedTokens) {
        this(new GenerateOutput(stream, 1), 0, workerId, metrics, true, importedTokens, "");
    }

    /** Choice {@code choice} of a request with several, prefilled here. */
    GenerateCall(GenerateOutput out, int choice, String workerId, GenerationMeters metrics) {
        this(out, choice, workerId, metrics, false, 0, "");
    }

    private GenerateCall(GenerateOutput out, int choice, String workerId, GenerationMeters metrics, boolean handoffUsed,
                         int importedTokens, String handoffRefusedReason) {
        this.out = out;
        this.choice = choice;
        this.workerId = workerId;
        this.metrics = metrics;
        this.handoffUsed = handoffUsed;
        this.importedTokens = importedTokens;
        this.handoffRefusedReason = handoffRefusedReason;
    }

    /** Runs {@code action} (once, on the engine thread: it must not block) when the first tokens arrive. */
    void onFirstTokens(Runnable action) {
        this.onFirstTokens = action;
    }

    @Override
    public void onTokens(int[] tokens) {
        onTokens(tokens, null);
    }

    @Override
    public void onTokens(int[] tokens, TokenLogprob[] logprobs) {
        if (onFirstTokens != null) {
            Runnable first = onFirstTokens;
            onFirstTokens = null;
            first.run();
        }
        if (out.closed()) {
            return;
        }
        GenerateChunk.Builder chunk = GenerateChunk.newBuilder().setWorkerId(workerId).setHandoffUsed(handoffUsed)
                .setChoice(choice);
        for (int t : tokens) {
            chunk.addTokenIds(t);
        }
        if (logprobs != null) {
            for (TokenLogprob lp : logprobs) {
                TokenLogprobs.Builder b = chunk.addLogprobsBuilder().setLogprob(lp.logprob());
                for (int i = 0; i < lp.topIds().length; i++) {
                    b.addTopTokenIds(lp.topIds()[i]).addTopLogprobs(lp.topLogprobs()[i]);
                }
            }
        }
        out.tokens(chunk.build());
    }

    @Override
    public void onFinish(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens) {
        metrics.requestFinished(promptTokens, cachedTokens, importedTokens);
        out.finished(GenerateChunk.newBuilder()
                .setWorkerId(workerId)
                .setChoice(choice)
                .setFinishReason(reason)
                .setUsage(Usage.newBuilder()
                        .setPromptTokens(promptTokens)
                        .setCachedTokens(cachedTokens)
                        .setCompletionTokens(completionTokens))
                .setHandoffUsed(handoffUsed)
                .setHandoffRefusedReason(handoffRefusedReason)
                .build());
    }

    @Override
    public void onError(Throwable error) {
        out.failed(CallFailure.of(error));
    }
}
