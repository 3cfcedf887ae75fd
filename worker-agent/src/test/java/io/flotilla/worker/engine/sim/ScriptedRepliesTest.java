package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.SamplingOptions;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.util.List;
import java.util.Map;

import static io.flotilla.worker.engine.sim.SimTesting.runUntilIdle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Scripted mode and structured output: the simulated engine's forced replies. */
class ScriptedRepliesTest {

    private static final SimText TEXT = SimText.of(SimText.CL100K, SimEngineConfig.DEFAULT_VOCAB_SIZE);
    private static final String TOOL_CALL = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    private static final SimScript SCRIPT = SimScript.parse("""
            {"rules": [
              {"contains": "<tool_response>", "reply": "It is sunny in Paris."},
              {"regex": "(?i)weather in \\\\w+", "reply": %s},
              {"prompt-hash": "%s", "reply-tokens": [11, 12, 13]}
            ]}""".formatted(JsonMapper.builder().build().writeValueAsString(TOOL_CALL),
            SimScript.promptHash(new int[] {5, 6, 7})), "test");

    private static RecordingSink run(SimScript script, EngineRequest request) {
        Scheduler s = new Scheduler(SimTesting.small().maxContextTokens(4096).totalBlocks(1024).build(), (p, e) -> { },
                script);
        RecordingSink sink = new RecordingSink();
        s.submit(request, sink);
        runUntilIdle(s, 5000);
        return sink;
    }

    private static EngineRequest chat(String text, int maxTokens) {
        return EngineRequest.of("c", TEXT.encode("<|im_start|>user\n" + text + "<|im_end|>\n<|im_start|>assistant\n"),
                maxTokens).withTemperature(1.0);
    }

    @Test
    void theFirstMatchingRuleRepliesTokenByTokenThenEndsTheSequence() {
        RecordingSink sink = run(SCRIPT, chat("What is the weather in Paris?", 200));
        int[] reply = TEXT.encode(TOOL_CALL);
        assertThat(sink.tokens).hasSize(reply.length + 1).startsWith(java.util.Arrays.stream(reply).boxed().toArray(Integer[]::new));
        assertThat(sink.tokens.get(reply.length)).as("then end-of-sequence").isEqualTo(SimEngineConfig.DEFAULT_EOS_TOKEN_ID);
        assertThat(sink.tokenCalls).as("one token per step, as a model streams").isEqualTo(reply.length + 1);
        assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_STOP);
        assertThat(TEXT.decode(sink.tokenArray())).isEqualTo(TOOL_CALL);

        assertThat(TEXT.decode(run(SCRIPT, chat("weather in Paris?\n<tool_response>\n{\"sky\": \"clear\"}\n</tool_response>",
                200)).tokenArray())).as("rules are tried in order").isEqualTo("It is sunny in Paris.");
    }

    @Test
    void maxTokensCutsAReplyShort() {
        RecordingSink sink = run(SCRIPT, chat("weather in Rome", 3));
        assertThat(sink.tokens).hasSize(3);
        assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_LENGTH);
    }

    @Test
    void promptHashRulesMatchTokenIdsAndAnUnmatchedPromptIsSampled() {
        assertThat(run(SCRIPT, EngineRequest.of("h", new int[] {5, 6, 7}, 10)).tokens).containsExactly(11, 12, 13,
                SimEngineConfig.DEFAULT_EOS_TOKEN_ID);
        EngineRequest other = chat("Tell me a story", 12).withSeed(4L);
        assertThat(run(SCRIPT, other).tokens).isEqualTo(run(null, other).tokens).hasSize(12);
    }

    @Test
    void badScriptsFailWithTheRule() {
        assertThatThrownBy(() -> SimScript.parse("{\"rules\": [{\"reply\": \"x\"}]}", "f"))
                .hasMessageContaining("f rule 0").hasMessageContaining("exactly one of contains, regex, prompt-hash");
        assertThatThrownBy(() -> SimScript.parse("{\"rules\": [{\"regex\": \"(\", \"reply\": \"x\"}]}", "f"))
                .hasMessageContaining("bad regex");
        assertThatThrownBy(() -> new Scheduler(SimTesting.small().vocabSize(300).eosTokenId(1).build(), (p, e) -> { }, SCRIPT))
                .hasMessageContaining("cl100k_base");
    }

    private static EngineRequest structured(SamplingOptions.OutputFormat.Kind kind, String schema, long seed) {
        return chat("Give me a book", 400).withSeed(seed).withOptions(new SamplingOptions(null, null, null, null, null, null, Map.of(), false,
                0, new SamplingOptions.OutputFormat(kind, schema, "book"), List.of()));
    }

    @Test
    void structuredOutputIsValidJsonForTheSchema() {
        String schema = """
                {"type": "object", "properties": {
                   "title": {"type": "string", "maxLength": 12},
                   "year": {"type": "integer", "minimum": 1900, "maximum": 2024},
                   "rating": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 5},
                   "genre": {"enum": ["novel", "poetry"]},
                   "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                   "author": {"$ref": "#/$defs/Author"}},
                 "required": ["title", "year", "rating", "genre", "tags", "author"],
                 "additionalProperties": false,
                 "$defs": {"Author": {"type": "object", "properties": {"name": {"type": "string"},
                                                                      "email": {"type": "string", "format": "email"}}}}}""";
        RecordingSink sink = run(null, structured(SamplingOptions.OutputFormat.Kind.JSON_SCHEMA, schema, 1));
        assertThat(sink.finishReason).isEqualTo(FinishReason.FINISH_REASON_STOP);
        JsonNode book = JsonMapper.builder().build().readTree(TEXT.decode(sink.tokenArray()));
        assertThat(book.path("title").asString().length()).isBetween(1, 12);
        assertThat(book.path("year").asInt()).isBetween(1900, 2024);
        assertThat(book.path("rating").asDouble()).isGreaterThan(0).isLessThanOrEqualTo(5);
        assertThat(book.path("genre").asString()).isIn("novel", "poetry");
        assertThat(book.path("tags").size()).isGreaterThanOrEqualTo(2);
        assertThat(book.path("author").path("email").asString()).endsWith("@example.com");

        String other = TEXT.decode(run(null, structured(SamplingOptions.OutputFormat.Kind.JSON_SCHEMA, schema, 2)).tokenArray());
        assertThat(other).as("another seed, another document").isNotEqualTo(TEXT.decode(sink.tokenArray()));
        JsonNode object = JsonMapper.builder().build().readTree(TEXT.decode(
                run(null, structured(SamplingOptions.OutputFormat.Kind.JSON_OBJECT, null, 3)).tokenArray()));
        assertThat(object.isObject()).isTrue();
    }

    @Test
    void aSchemaItCannotHonourIsRefusedNamingTheKeyword() {
        Scheduler s = new Scheduler(SimTesting.small().maxContextTokens(4096).totalBlocks(1024).build(), (p, e) -> { });
        assertThatThrownBy(() -> s.submit(structured(SamplingOptions.OutputFormat.Kind.JSON_SCHEMA,
                "{\"type\": \"object\", \"properties\": {\"code\": {\"type\": \"string\", \"pattern\": \"^[A-Z]+$\"}}}", 1),
                new RecordingSink()))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("/properties/code/pattern").hasMessageContaining("'pattern'");
    }
}
