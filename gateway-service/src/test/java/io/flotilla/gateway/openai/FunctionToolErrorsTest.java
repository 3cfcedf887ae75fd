package io.flotilla.gateway.openai;

import io.flotilla.gateway.anthropic.MessagesRequestParser;
import io.flotilla.gateway.responses.ResponsesRequestParser;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The function-tool mistakes of the three APIs that take tools, each in its own API's wording and field
 * paths: the exact status, type, param, code and message a client sees.
 */
class FunctionToolErrorsTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    enum Api {
        CHAT(body -> new RequestParser().parse(CompletionKind.CHAT, JSON.readTree(
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]," + body + "}"))),
        RESPONSES(body -> new ResponsesRequestParser(JSON).parse(JSON.readTree(
                "{\"model\":\"m\",\"input\":\"hi\"," + body + "}"), "req1", null)),
        MESSAGES(body -> new MessagesRequestParser().parse(JSON.readTree(
                "{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]," + body + "}")));

        final Consumer<String> parse;

        Api(Consumer<String> parse) {
            this.parse = parse;
        }

        /** One function tool named {@code name}, as this API spells it. */
        String tool(String name) {
            return switch (this) {
                case CHAT -> "{\"type\":\"function\",\"function\":{\"name\":\"" + name + "\"}}";
                case RESPONSES -> "{\"type\":\"function\",\"name\":\"" + name + "\"}";
                case MESSAGES -> "{\"name\":\"" + name + "\",\"input_schema\":{\"type\":\"object\"}}";
            };
        }

        String tools(int count) {
            return "\"tools\":[" + IntStream.range(0, count).mapToObj(i -> tool("f" + i))
                    .collect(Collectors.joining(",")) + "]";
        }
    }

    record Case(Api api, String body, String param, String code, String message) {
        @Override
        public String toString() {
            return api + " " + body.substring(0, Math.min(60, body.length()));
        }
    }

    static List<Case> cases() {
        return List.of(
                new Case(Api.CHAT, "\"tools\":{}", "tools", null,
                        "Invalid type for 'tools': expected an array, but got an object instead."),
                new Case(Api.RESPONSES, "\"tools\":{}", "tools", null,
                        "Invalid type for 'tools': expected an array, but got an object instead."),
                new Case(Api.MESSAGES, "\"tools\":{}", "tools", null,
                        "Invalid type for 'tools': expected an array, but got an object instead."),
                new Case(Api.CHAT, Api.CHAT.tools(129), "tools", null, "Invalid 'tools': at most 128 tools are allowed."),
                new Case(Api.RESPONSES, Api.RESPONSES.tools(129), "tools", null,
                        "Invalid 'tools': at most 128 tools are allowed."),
                new Case(Api.MESSAGES, Api.MESSAGES.tools(129), "tools", null, "tools: at most 128 tools are allowed."),
                new Case(Api.CHAT, "\"tools\":[" + Api.CHAT.tool("f") + "," + Api.CHAT.tool("f") + "]",
                        "tools[1].function.name", null, "Invalid 'tools': the function name 'f' is used twice."),
                new Case(Api.RESPONSES, "\"tools\":[" + Api.RESPONSES.tool("f") + "," + Api.RESPONSES.tool("f") + "]",
                        "tools[1].name", null, "Invalid 'tools': the function name 'f' is used twice."),
                new Case(Api.MESSAGES, "\"tools\":[" + Api.MESSAGES.tool("f") + "," + Api.MESSAGES.tool("f") + "]",
                        "tools.1.name", null, "tools: Tool names must be unique ('f' is used twice)."),
                new Case(Api.CHAT, "\"tools\":[3]", "tools[0]", null,
                        "Invalid type for 'tools[0]': expected an object, but got an integer instead."),
                new Case(Api.RESPONSES, "\"tools\":[3]", "tools[0]", null,
                        "Invalid type for 'tools[0]': expected an object, but got an integer instead."),
                new Case(Api.MESSAGES, "\"tools\":[3]", "tools.0", null,
                        "tools.0: expected an object, but got an integer instead."));
    }

    /**
     * {@code strict} is accepted with every tool_choice: the official SDKs send {@code strict: true} for every typed
     * tool (OpenAiSdkExamplesTest), whatever the choice.
     */
    @ParameterizedTest
    @ValueSource(strings = {
            "CHAT|\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"g\",\"strict\":true}}],\"tool_choice\":\"required\"",
            "CHAT|\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"g\",\"strict\":true}}],"
                    + "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"g\"}}",
            "CHAT|\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"g\",\"strict\":true}}],\"tool_choice\":\"none\"",
            "CHAT|\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"g\",\"strict\":false}}]",
            "CHAT|\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"g\",\"strict\":true}}]",
            "RESPONSES|\"tools\":[{\"type\":\"function\",\"name\":\"g\",\"strict\":true}],\"tool_choice\":\"auto\"",
            "RESPONSES|\"tools\":[{\"type\":\"function\",\"name\":\"g\",\"strict\":true}],\"tool_choice\":\"required\"",
            "RESPONSES|\"tools\":[{\"type\":\"function\",\"name\":\"g\",\"strict\":true}],"
                    + "\"tool_choice\":{\"type\":\"function\",\"name\":\"g\"}",
            "RESPONSES|\"tools\":[{\"type\":\"function\",\"name\":\"g\",\"strict\":false}]"})
    void strictIsAcceptedWithEveryToolChoice(String apiAndBody) {
        String[] parts = apiAndBody.split("\\|", 2);
        Api.valueOf(parts[0]).parse.accept(parts[1]);
    }

    @ParameterizedTest
    @MethodSource("cases")
    void eachApiSaysItInItsOwnWords(Case c) {
        ApiError e = catchThrowableOfType(ApiError.class, () -> c.api().parse.accept(c.body()));
        assertThat(e).as("refused").isNotNull();
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.type()).isEqualTo(ApiError.INVALID_REQUEST);
        assertThat(e.param()).isEqualTo(c.param());
        assertThat(e.code()).isEqualTo(c.code());
        assertThat(e.getMessage()).isEqualTo(c.message());
    }
}
