package io.flotilla.gateway.tokenize;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Real chat templates (test resources {@code models/<name>/tokenizer_config.json}, copied from the model
 * repositories) render exactly what transformers' {@code apply_chat_template(messages,
 * add_generation_prompt=True)} renders. The expected strings were produced by
 * {@code models/render_reference.py} (Python's Jinja 3.1.6 in transformers' environment) on the same
 * messages and date, 26 Jul 2024.
 */
class JinjaChatTemplateTest {

    static final Clock JULY_26 = Clock.fixed(Instant.parse("2024-07-26T10:00:00Z"), ZoneOffset.UTC);

    static final List<ChatMessage> CONVERSATION = List.of(
            new ChatMessage("system", null, "You are a helpful assistant. "),
            new ChatMessage("user", null, "Hello, how are you?"),
            new ChatMessage("assistant", null, "I am doing great. How can I help you today?"),
            new ChatMessage("user", null, "Show me how chat templating works! ünïcödé 😀"));
    static final List<ChatMessage> HELLO = List.of(new ChatMessage("user", null, "Hello"));

    @TempDir
    Path tmp;

    private ChatTemplate template(String model) {
        Path dir = TinyTokenizers.modelDir(tmp.resolve(model), "/models/" + model);
        ModelTokenization t = HfModelDirectory.load(model, dir, null, null, JULY_26);
        ((HfTokenizer) t.tokenizer()).close();
        return t.template();
    }

    @Test
    void llama32() {
        ChatTemplate t = template("llama-3.2-3b-instruct");
        assertThat(t.render(CONVERSATION)).isEqualTo("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
                + "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are a helpful assistant.<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHello, how are you?<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\nI am doing great. How can I help you today?<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nShow me how chat templating works! ünïcödé 😀<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\n");
        assertThat(t.render(HELLO)).isEqualTo("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
                + "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    }

    @Test
    void qwen25() {
        ChatTemplate t = template("qwen2.5-7b-instruct");
        assertThat(t.render(CONVERSATION)).isEqualTo("<|im_start|>system\nYou are a helpful assistant. <|im_end|>\n"
                + "<|im_start|>user\nHello, how are you?<|im_end|>\n"
                + "<|im_start|>assistant\nI am doing great. How can I help you today?<|im_end|>\n"
                + "<|im_start|>user\nShow me how chat templating works! ünïcödé 😀<|im_end|>\n<|im_start|>assistant\n");
        assertThat(t.render(HELLO)).isEqualTo("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a "
                + "helpful assistant.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
    }

    /** A tool call and its result in the history, with tools: rendered as {@code render_reference.py} renders it. */
    static final List<ChatMessage> TOOL_TURN = List.of(
            new ChatMessage("user", null, "Weather in Paris?"),
            new ChatMessage("assistant", null, null, List.of(new ChatMessage.ToolCall("call_1", "get_weather",
                    "{\"city\": \"Paris\"}")), null, null),
            new ChatMessage("tool", null, "{\"sky\": \"clear\"}", List.of(), "call_1", null));

    @SuppressWarnings("unchecked")
    static final List<java.util.Map<String, Object>> TOOLS = (List<java.util.Map<String, Object>>)
            io.flotilla.gateway.jinja.JsonValues.toJava(tools.jackson.databind.json.JsonMapper.builder().build().readTree(
                    "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"Current weather\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}}]"));

    @Test
    void toolsAndToolTurnsRenderAsTransformersRendersThem() {
        assertThat(template("qwen2.5-7b-instruct").render(TOOL_TURN, TOOLS)).isEqualTo("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Current weather\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n{\"sky\": \"clear\"}\n</tool_response><|im_end|>\n<|im_start|>assistant\n");
        List<ChatMessage> mistralIds = List.of(TOOL_TURN.get(0), new ChatMessage("assistant", null, null,
                List.of(new ChatMessage.ToolCall("abc123XYZ", "get_weather", "{\"city\": \"Paris\"}")), null, null),
                new ChatMessage("tool", null, "{\"sky\": \"clear\"}", List.of(), "abc123XYZ", null));
        assertThat(template("mistral-nemo-instruct-2407").render(mistralIds, TOOLS)).as("its ids must be 9 characters")
                .isEqualTo("<s>[AVAILABLE_TOOLS][{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Current weather\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}}][/AVAILABLE_TOOLS][INST]Weather in Paris?[/INST][TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"abc123XYZ\"}]</s>[TOOL_RESULTS]{\"content\": {\"sky\": \"clear\"}, \"call_id\": \"abc123XYZ\"}[/TOOL_RESULTS]");
        assertThat(template("llama-3.2-3b-instruct").render(TOOL_TURN, TOOLS)).isEqualTo("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.Do not use variables.\n\n{\n    \"type\": \"function\",\n    \"function\": {\n        \"name\": \"get_weather\",\n        \"description\": \"Current weather\",\n        \"parameters\": {\n            \"type\": \"object\",\n            \"properties\": {\n                \"city\": {\n                    \"type\": \"string\"\n                }\n            },\n            \"required\": [\n                \"city\"\n            ]\n        }\n    }\n}\n\nWeather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>\n\n\"{\\\"sky\\\": \\\"clear\\\"}\"<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    }

    @Test
    void developerIsRenderedAsSystem() {
        ChatTemplate t = template("qwen2.5-7b-instruct");
        assertThat(t.render(List.of(new ChatMessage("developer", null, "Be brief."), new ChatMessage("user", null, "Hi"))))
                .isEqualTo("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    }

    @Test
    void mistral7bV01() {
        ChatTemplate t = template("mistral-7b-instruct-v0.1");
        // the rendering HuggingFace's chat-templating docs show for this model
        assertThat(t.render(List.of(new ChatMessage("user", null, "Hello, how are you?"),
                new ChatMessage("assistant", null, "I am doing great. How can I help you today?"),
                new ChatMessage("user", null, "Show me how chat templating works!"))))
                .isEqualTo("<s>[INST] Hello, how are you? [/INST]I am doing great. How can I help you today?</s> "
                        + "[INST] Show me how chat templating works! [/INST]");
        assertThat(t.render(HELLO)).isEqualTo("<s>[INST] Hello [/INST]");
    }

    @Test
    void aTemplateRejectingTheConversationIsAClientError() {
        ChatTemplate t = template("mistral-7b-instruct-v0.1");
        assertThatThrownBy(() -> t.render(CONVERSATION)) // this template has no system role
                .as("a client error: the HTTP layer answers 400 naming messages (ErrorResponsesTest)")
                .isInstanceOf(TemplateRejectedException.class)
                .hasMessageContaining("Conversation roles must alternate user/assistant/user/assistant/...");
    }

    @Test
    void mistralNemo() {
        ChatTemplate t = template("mistral-nemo-instruct-2407");
        assertThat(t.render(CONVERSATION)).isEqualTo("<s>[INST]Hello, how are you?[/INST]I am doing great. How can I "
                + "help you today?</s>[INST]You are a helpful assistant. \n\nShow me how chat templating works! ünïcödé 😀[/INST]");
        assertThat(t.render(HELLO)).isEqualTo("<s>[INST]Hello[/INST]");
        assertThatThrownBy(() -> t.render(List.of(new ChatMessage("user", null, "a"), new ChatMessage("user", null, "b"))))
                .isInstanceOf(TemplateRejectedException.class).hasMessageContaining("conversation roles must alternate");
    }

    /**
     * {@code models/python-compat/chat_template.jinja} uses what Python's Jinja has and Jinjava lacks:
     * {@code str} methods, {@code tojson} with an indent, {@code namespace}, {@code strftime_now}, a
     * {@code bos_token} given as an AddedToken object.
     */
    @Test
    void pythonCompatibility() {
        ChatTemplate t = template("python-compat");
        List<ChatMessage> messages = List.of(new ChatMessage("system", null, "Be brief.  "),
                new ChatMessage("user", "ann", "  line one\n- line two  "),
                new ChatMessage("assistant", null, "ok"), new ChatMessage("user", null, "last"));
        assertThat(t.render(messages)).isEqualTo("<s>[SYSTEM] Be brief. {\"role\": \"system\", \"content\": \"Be brief.  \"}\n"
                + "---[USER:ann] line two {\"role\": \"user\", \"content\": \"  line one\\n- line two  \", \"name\": \"ann\"}\n"
                + "---[ASSISTANT] ok {\"role\": \"assistant\", \"content\": \"ok\"}\n"
                + "---[USER*] last {\"role\": \"user\", \"content\": \"last\"}\n"
                + "{\n  \"roles\": [\n    \"system\",\n    \"user\",\n    \"assistant\",\n    \"user\"\n  ],\n  \"n\": 4,\n"
                + "  \"f\": 1.5,\n  \"ok\": true,\n  \"none\": null,\n  \"text\": \"tab\\there \\\"q\\\" é\"\n}"
                + "<|assistant|>2024-07-26 Fri 26 July");
        assertThatThrownBy(() -> t.render(List.of(new ChatMessage("user", null, "/reset now"))))
                .isInstanceOf(TemplateRejectedException.class).hasMessageContaining("commands are not allowed: /reset");
    }

    @Test
    void rendersConcurrently() throws Exception {
        ChatTemplate t = template("llama-3.2-3b-instruct");
        String expected = t.render(CONVERSATION);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                results.add(pool.submit(() -> t.render(CONVERSATION)));
            }
            for (Future<String> r : results) {
                assertThat(r.get()).isEqualTo(expected);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
