package io.flotilla.gateway.anthropic;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.CompletionRequest;
import io.flotilla.gateway.openai.ToolsRequest;
import io.flotilla.gateway.tokenize.ChatMessage;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A Messages body becomes the chat request /v1/chat/completions would build for the same conversation. */
class MessagesRequestParserTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final MessagesRequestParser parser = new MessagesRequestParser();

    private MessagesRequest parse(String json) {
        return parser.parse(JSON.readTree(json));
    }

    private static final String WEATHER_TOOL = "{\"name\":\"get_weather\",\"description\":\"Weather of a city\","
            + "\"input_schema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}";

    @Test
    void aToolConversationBecomesChatMessagesInOrder() {
        MessagesRequest r = parse("""
                {"model":"m","max_tokens":50,
                 "system":[{"type":"text","text":"Be brief."},{"type":"text","text":"Use tools.","cache_control":{"type":"ephemeral"}}],
                 "messages":[
                   {"role":"user","content":"Weather in Paris?"},
                   {"role":"assistant","content":[
                     {"type":"thinking","thinking":"I should call the tool.","signature":""},
                     {"type":"text","text":"Let me look."},
                     {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},
                   {"role":"user","content":[
                     {"type":"tool_result","tool_use_id":"toolu_1","content":"Sunny"},
                     {"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"no such city"}],"is_error":true},
                     {"type":"text","text":"And tomorrow?"}]}],
                 "tools":[%s]}
                """.formatted(WEATHER_TOOL));
        List<ChatMessage> m = r.completion().messages();
        assertThat(m).containsExactly(
                new ChatMessage("system", null, "Be brief.\nUse tools."),
                new ChatMessage("user", null, "Weather in Paris?"),
                new ChatMessage("assistant", null, "Let me look.",
                        List.of(new ChatMessage.ToolCall("toolu_1", "get_weather", "{\"city\":\"Paris\"}")), null,
                        "I should call the tool."),
                new ChatMessage("tool", null, "Sunny", List.of(), "toolu_1", null),
                new ChatMessage("tool", null, "Error: no such city", List.of(), "toolu_2", null),
                new ChatMessage("user", null, "And tomorrow?"));
        ToolsRequest tools = r.completion().tools();
        assertThat(tools.choice()).isEqualTo(ToolsRequest.Choice.AUTO);
        assertThat(tools.parallel()).isTrue();
        assertThat(tools.tools()).singleElement().satisfies(t -> {
            assertThat(t.name()).isEqualTo("get_weather");
            assertThat(t.parameters()).isEqualTo(Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string"))));
            assertThat(t.template()).isEqualTo(Map.of("type", "function", "function", Map.of("name", "get_weather",
                    "description", "Weather of a city", "parameters", t.parameters())));
        });
    }

    @Test
    void samplingStopsTenantAndLimitGoWhereTheChatPathPutsThem() {
        MessagesRequest r = parse("""
                {"model":"m","max_tokens":7,"messages":[{"role":"user","content":"hi"}],"temperature":0.3,"top_p":0.9,
                 "top_k":5,"stop_sequences":["###","END"],"metadata":{"user_id":"u-42"},"stream":true,
                 "service_tier":"auto","thinking":{"type":"adaptive"}}
                """);
        CompletionRequest c = r.completion();
        assertThat(c.kind()).isEqualTo(CompletionKind.CHAT);
        assertThat(c.model()).isEqualTo("m");
        assertThat(c.maxTokens()).isEqualTo(7);
        assertThat(c.sampling().temperature()).isEqualTo(0.3);
        assertThat(c.sampling().topP()).isEqualTo(0.9);
        assertThat(c.sampling().topK()).isEqualTo(5);
        assertThat(c.sampling().seed()).isNull();
        assertThat(c.stop()).containsExactly("###", "END");
        assertThat(c.user()).isEqualTo("u-42");
        assertThat(c.stream()).isTrue();
        assertThat(c.n()).isEqualTo(1);
        assertThat(r.thinking()).isEqualTo(MessagesRequest.Thinking.ADAPTIVE);
        assertThat(c.tools()).isEqualTo(ToolsRequest.NONE);
    }

    @ParameterizedTest(name = "tool_choice {0}")
    @CsvSource(delimiter = '|', value = {
            "{\"type\":\"auto\"}                                    | AUTO     |          | true",
            "{\"type\":\"auto\",\"disable_parallel_tool_use\":true} | AUTO     |          | false",
            "{\"type\":\"any\"}                                     | REQUIRED |          | true",
            "{\"type\":\"tool\",\"name\":\"get_weather\"}           | FUNCTION | get_weather | true",
            "{\"type\":\"none\"}                                    | NONE     |          | true",
    })
    void toolChoiceMapsToTheChatPathsChoice(String choice, ToolsRequest.Choice mode, String function, boolean parallel) {
        ToolsRequest tools = parse("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":["
                + WEATHER_TOOL + "],\"tool_choice\":" + choice + "}").completion().tools();
        assertThat(tools.choice()).isEqualTo(mode);
        assertThat(tools.function()).isEqualTo(function);
        assertThat(tools.parallel()).isEqualTo(parallel);
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', value = {
            "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}                                   | max_tokens",
            "{\"max_tokens\":5}                                                                          | messages",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"frequency_penalty\":1} | frequency_penalty",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":1.5} | temperature",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"top_k\":-1}       | top_k",
            "{\"max_tokens\":0,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}                   | max_tokens",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"container\":\"c\"} | container",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048}} | thinking.budget_tokens",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"system\",\"content\":\"hi\"}]}                 | messages.0.role",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"The\"}]} | messages.1",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"source\":{}}]}]} | messages.0.content.0.type",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\",\"x\":1}]}]} | messages.0.content.0.x",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[{\"type\":\"web_search_20250305\",\"name\":\"web_search\"}]} | tools.0.type",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[{\"name\":\"f\"}]} | tools.0.input_schema",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tool_choice\":{\"type\":\"any\"}} | tool_choice",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stop_sequences\":[\"\"]} | stop_sequences",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"metadata\":{\"session\":\"s\"}} | metadata.session",
    })
    void whatCannotBeHonouredIsA400NamingIt(String body, String param) {
        assertThatThrownBy(() -> parse(body)).isInstanceOfSatisfying(ApiError.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.param()).isEqualTo(param);
            assertThat(e.getMessage()).contains(param);
        });
    }
}
