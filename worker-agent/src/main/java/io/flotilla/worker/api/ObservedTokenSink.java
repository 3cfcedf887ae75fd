package io.flotilla.worker.api;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.TokenLogprob;
import io.flotilla.worker.engine.TokenSink;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import java.util.Locale;

/**
 * One request's time on the engine as an observation, {@code flotilla.worker.engine}: started where the request is
 * submitted (a child of the Generate call's observation, so the engine's span sits in the request's trace), an event
 * {@code first-token} when prefill is done and the first tokens arrive, stopped at finish or error with the prompt,
 * cached and completion token counts. Passes every callback on unchanged; with tracing off the registry's handlers
 * only time it.
 */
final class ObservedTokenSink implements TokenSink {

    static final String NAME = "flotilla.worker.engine";
    private static final Observation.Event FIRST_TOKEN = Observation.Event.of("first-token",
            "prefill done, the first tokens streamed");

    private final TokenSink sink;
    private final Observation observation;
    private boolean firstSeen;

    private ObservedTokenSink(TokenSink sink, Observation observation) {
        this.sink = sink;
        this.observation = observation;
    }

    /** {@code sink} observed as {@code engine}'s generation on {@code workerId}; started now. */
    static TokenSink start(TokenSink sink, ObservationRegistry registry, String workerId, String engine) {
        if (registry.isNoop()) {
            return sink;
        }
        Observation o = Observation.createNotStarted(NAME, registry)
                .contextualName("engine generate")
                .lowCardinalityKeyValue("engine", engine)
                .highCardinalityKeyValue("worker", workerId)
                .start();
        return new ObservedTokenSink(sink, o);
    }

    /**
     * Makes {@code sink}'s observation current on this thread until the scope closes (nothing for a sink that
     * is not observed): what the engine calls out to while submitting (an HTTP engine's request) is its child.
     */
    static Observation.Scope openScope(TokenSink sink) {
        return sink instanceof ObservedTokenSink observed ? observed.observation.openScope() : Observation.Scope.NOOP;
    }

    @Override
    public void onTokens(int[] tokens) {
        first();
        sink.onTokens(tokens);
    }

    @Override
    public void onTokens(int[] tokens, TokenLogprob[] logprobs) {
        first();
        sink.onTokens(tokens, logprobs);
    }

    private void first() {
        if (!firstSeen) {
            firstSeen = true;
            observation.event(FIRST_TOKEN);
        }
    }

    @Override
    public void onFinish(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens) {
        observation.lowCardinalityKeyValue("finish", reason.name().toLowerCase(Locale.ROOT).replace("finish_reason_", ""))
                .highCardinalityKeyValue(KeyValue.of("prompt_tokens", Integer.toString(promptTokens)))
                .highCardinalityKeyValue(KeyValue.of("cached_tokens", Integer.toString(cachedTokens)))
                .highCardinalityKeyValue(KeyValue.of("completion_tokens", Integer.toString(completionTokens)));
        try {
            sink.onFinish(reason, promptTokens, cachedTokens, completionTokens);
        } finally {
            observation.stop();
        }
    }

    @Override
    public void onError(Throwable error) {
        observation.lowCardinalityKeyValue("finish", "error").error(error);
        try {
            sink.onError(error);
        } finally {
            observation.stop();
        }
    }
}
