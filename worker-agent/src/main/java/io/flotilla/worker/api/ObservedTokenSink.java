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
 * cached and completion token counts. Its two phases are child observations: {@code flotilla.worker.engine.prefill}
 * ("engine prefill", from submission to the first tokens: the engine's queue and the prompt's forward pass, which an
 * engine behind HTTP does not tell apart) and {@code flotilla.worker.engine.decode} ("engine decode", from the first
 * tokens to the finish). Passes every callback on unchanged; with tracing off the registry's handlers only time them.
 */
final class ObservedTokenSink implements TokenSink {

    static final String NAME = "flotilla.worker.engine";
    static final String PREFILL = NAME + ".prefill";
    static final String DECODE = NAME + ".decode";
    private static final Observation.Event FIRST_TOKEN = Observation.Event.of("first-token",
            "prefill done, the first tokens streamed");

    private final TokenSink sink;
    private final ObservationRegistry registry;
    private final Observation observation;
    /** The phase under way: prefill until the first tokens, then decode. */
    private Observation phase;
    private boolean firstSeen;

    private ObservedTokenSink(TokenSink sink, ObservationRegistry registry, Observation observation) {
        this.sink = sink;
        this.registry = registry;
        this.observation = observation;
        this.phase = phase(PREFILL, "engine prefill");
    }

    private Observation phase(String name, String contextualName) {
        return Observation.createNotStarted(name, registry).contextualName(contextualName)
                .parentObservation(observation).start();
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
        return new ObservedTokenSink(sink, registry, o);
    }

    /**
     * Makes {@code sink}'s observation current on this thread until the scope closes (nothing for a sink that
     * is not observed): what the engine calls out to while submitting (an HTTP engine's request) is its child.
     */
    static Observation.Scope openScope(TokenSink sink) {
        return sink instanceof ObservedTokenSink observed ? observed.observation.openScope() : Observation.Scope.NOOP;
    }

    /**
     * Ends {@code sink}'s observation with {@code error} without telling the sink (nothing for a sink that is not
     * observed): for a submission the engine refused, whose caller answers the client itself.
     */
    static void abandon(TokenSink sink, Throwable error) {
        if (sink instanceof ObservedTokenSink observed) {
            observed.observation.lowCardinalityKeyValue("finish", "error").error(error);
            observed.phase.error(error);
            observed.phase.stop();
            observed.observation.stop();
        }
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
            phase.stop();
            phase = phase(DECODE, "engine decode");
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
            phase.stop();
            observation.stop();
        }
    }

    @Override
    public void onError(Throwable error) {
        observation.lowCardinalityKeyValue("finish", "error").error(error);
        phase.error(error);
        try {
            sink.onError(error);
        } finally {
            phase.stop();
            observation.stop();
        }
    }
}
