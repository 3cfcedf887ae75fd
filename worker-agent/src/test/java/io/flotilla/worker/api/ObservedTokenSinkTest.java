package io.flotilla.worker.api;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.TokenSink;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The engine's observation and its two phases: prefill until the first tokens, decode until the finish. */
class ObservedTokenSinkTest {

    /** What a tracing handler sees: each start and stop, with the observation's parent. */
    private static final class Recorder implements ObservationHandler<Observation.Context> {
        final List<String> events = new ArrayList<>();

        @Override
        public void onStart(Observation.Context context) {
            events.add("start " + context.getName() + parentOf(context));
        }

        @Override
        public void onError(Observation.Context context) {
            events.add("error " + context.getName());
        }

        @Override
        public void onStop(Observation.Context context) {
            events.add("stop " + context.getName());
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

        private static String parentOf(Observation.Context context) {
            return context.getParentObservation() == null ? ""
                    : " < " + context.getParentObservation().getContextView().getName();
        }
    }

    private static final TokenSink NOTHING = errorsTo(new ArrayList<>());

    /** A sink that keeps only the errors it is told. */
    private static TokenSink errorsTo(List<Throwable> errors) {
        return new TokenSink() {
            @Override
            public void onTokens(int[] tokens) {
            }

            @Override
            public void onFinish(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens) {
            }

            @Override
            public void onError(Throwable error) {
                errors.add(error);
            }
        };
    }

    private static Recorder recorder(ObservationRegistry registry) {
        Recorder r = new Recorder();
        registry.observationConfig().observationHandler(r);
        return r;
    }

    @Test
    void prefillEndsAtTheFirstTokensAndDecodeAtTheFinish() {
        ObservationRegistry registry = ObservationRegistry.create();
        Recorder r = recorder(registry);
        TokenSink sink = ObservedTokenSink.start(NOTHING, registry, "w0", "sim");
        sink.onTokens(new int[]{1});
        sink.onTokens(new int[]{2, 3});
        sink.onFinish(FinishReason.FINISH_REASON_STOP, 10, 0, 3);
        assertThat(r.events).containsExactly(
                "start flotilla.worker.engine",
                "start flotilla.worker.engine.prefill < flotilla.worker.engine",
                "stop flotilla.worker.engine.prefill",
                "start flotilla.worker.engine.decode < flotilla.worker.engine",
                "stop flotilla.worker.engine.decode",
                "stop flotilla.worker.engine");
    }

    @Test
    void anErrorBeforeTheFirstTokenEndsThePrefillWithIt() {
        ObservationRegistry registry = ObservationRegistry.create();
        Recorder r = recorder(registry);
        TokenSink sink = ObservedTokenSink.start(NOTHING, registry, "w0", "sim");
        sink.onError(new IllegalStateException("engine gone"));
        assertThat(r.events).containsExactly(
                "start flotilla.worker.engine",
                "start flotilla.worker.engine.prefill < flotilla.worker.engine",
                "error flotilla.worker.engine",
                "error flotilla.worker.engine.prefill",
                "stop flotilla.worker.engine.prefill",
                "stop flotilla.worker.engine");
    }

    @Test
    void aFinishWithoutTokensEndsThePrefill() {
        ObservationRegistry registry = ObservationRegistry.create();
        Recorder r = recorder(registry);
        ObservedTokenSink.start(NOTHING, registry, "w0", "sim").onFinish(FinishReason.FINISH_REASON_LENGTH, 10, 0, 0);
        assertThat(r.events).containsExactly(
                "start flotilla.worker.engine",
                "start flotilla.worker.engine.prefill < flotilla.worker.engine",
                "stop flotilla.worker.engine.prefill",
                "stop flotilla.worker.engine");
    }

    @Test
    void aSubmissionTheEngineRefusedEndsTheObservationWithoutTellingTheSink() {
        ObservationRegistry registry = ObservationRegistry.create();
        Recorder r = recorder(registry);
        List<Throwable> told = new ArrayList<>();
        ObservedTokenSink.abandon(ObservedTokenSink.start(errorsTo(told), registry, "w0", "sim"), new IllegalStateException("full"));
        assertThat(r.events).containsExactly(
                "start flotilla.worker.engine",
                "start flotilla.worker.engine.prefill < flotilla.worker.engine",
                "error flotilla.worker.engine",
                "error flotilla.worker.engine.prefill",
                "stop flotilla.worker.engine.prefill",
                "stop flotilla.worker.engine");
        assertThat(told).as("the caller answers the client itself").isEmpty();
    }

    @Test
    void withoutHandlersTheSinkIsPassedOnAsItIs() {
        assertThat(ObservedTokenSink.start(NOTHING, ObservationRegistry.NOOP, "w0", "sim")).isSameAs(NOTHING);
    }
}
