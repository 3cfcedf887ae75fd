package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.InvalidRequestException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class RequestValidationTest {

    // small(): vocab 100277, context 256, pool 64 blocks × 4 tokens.
    private static final SimEngineConfig CONFIG = SimTesting.small().build();

    static Stream<Arguments> invalidRequests() {
        int[] ok = {1, 2, 3};
        return Stream.of(
                arguments("empty prompt", EngineRequest.of("r", new int[0], 5), "prompt of r is empty"),
                arguments("blank id", EngineRequest.of(" ", ok, 5), "request id must not be blank"),
                arguments("no tokens wanted", EngineRequest.of("r", ok, 0), "max tokens must be at least 1"),
                arguments("over the context", EngineRequest.of("r", ok, 254), "exceeds the context limit of 256"),
                arguments("negative token", EngineRequest.of("r", new int[] {1, -1}, 5),
                        "prompt token at index 1 is -1, outside the vocabulary [0, 100277)"),
                arguments("token == vocab size", EngineRequest.of("r", new int[] {100277}, 5),
                        "prompt token at index 0 is 100277"),
                arguments("stop id out of range", EngineRequest.of("r", ok, 5).withStop(new int[] {200000}, false),
                        "stop token id at index 0 is 200000"),
                arguments("negative temperature", EngineRequest.of("r", ok, 5).withTemperature(-0.5),
                        "temperature must be a finite number >= 0"),
                arguments("NaN temperature", EngineRequest.of("r", ok, 5).withTemperature(Double.NaN),
                        "temperature"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidRequests")
    void isRejectedAsInvalid(String name, EngineRequest request, String message) {
        Scheduler s = new Scheduler(CONFIG, (p, e) -> { });
        assertThatThrownBy(() -> s.submit(request, new RecordingSink()))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining(message);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidRequests")
    void isRejectedByTheEngineToo(String name, EngineRequest request, String message) {
        try (SimulatedEngine engine = new SimulatedEngine(CONFIG, new ManualClock(), new ManualClock(), EngineListeners.NONE)) {
            assertThatThrownBy(() -> engine.submit(request, new RecordingSink()))
                    .isInstanceOf(InvalidRequestException.class).hasMessageContaining(message);
        }
    }

    @org.junit.jupiter.api.Test
    void aRequestLargerThanTheKvPoolIsInvalid() {
        SimEngineConfig tiny = SimTesting.small().totalBlocks(4).build(); // 16 tokens of KV
        Scheduler s = new Scheduler(tiny, (p, e) -> { });
        assertThatThrownBy(() -> s.submit(EngineRequest.of("r", SimTesting.prompt(10, 1), 7), new RecordingSink()))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("exceeds the KV pool of 16 tokens");
    }
}
