package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.TokenLogprob;
import io.flotilla.worker.engine.TokenSink;

import java.util.ArrayList;
import java.util.List;

/** A token sink that remembers everything and checks the callback order contract. */
class RecordingSink implements TokenSink {

    final List<Integer> tokens = new ArrayList<>();
    final List<TokenLogprob> logprobs = new ArrayList<>();
    int tokenCalls;
    FinishReason finishReason;
    int promptTokens = -1;
    int cachedTokens = -1;
    int completionTokens = -1;
    Throwable error;

    @Override
    public void onTokens(int[] out) {
        if (done()) {
            throw new AssertionError("tokens after the terminal callback");
        }
        tokenCalls++;
        for (int t : out) {
            tokens.add(t);
        }
    }

    @Override
    public void onTokens(int[] out, TokenLogprob[] lps) {
        onTokens(out);
        logprobs.addAll(java.util.Arrays.asList(lps));
    }

    @Override
    public void onFinish(FinishReason reason, int prompt, int cached, int completion) {
        if (done()) {
            throw new AssertionError("second terminal callback");
        }
        finishReason = reason;
        promptTokens = prompt;
        cachedTokens = cached;
        completionTokens = completion;
    }

    @Override
    public void onError(Throwable e) {
        if (done()) {
            throw new AssertionError("second terminal callback");
        }
        error = e;
    }

    boolean done() {
        return finishReason != null || error != null;
    }

    int[] tokenArray() {
        return tokens.stream().mapToInt(Integer::intValue).toArray();
    }
}
