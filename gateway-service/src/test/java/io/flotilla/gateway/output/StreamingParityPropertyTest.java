package io.flotilla.gateway.output;

import io.flotilla.gateway.anthropic.MessageRenderer;
import io.flotilla.gateway.anthropic.MessageStream;
import io.flotilla.gateway.generation.RequestEvent;
import io.flotilla.gateway.openai.TokenUsage;
import io.flotilla.gateway.reasoning.ReasoningParser;
import io.flotilla.gateway.responses.ResponseEvents;
import io.flotilla.gateway.responses.ResponseObjects;
import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import io.flotilla.gateway.tokenize.Tokenizer;
import io.flotilla.gateway.toolcall.ToolCallParser;
import io.flotilla.gateway.toolcall.ToolCallParsers;
import io.flotilla.gateway.toolcall.ToolCalls;
import io.flotilla.protocol.v1.FinishReason;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Streaming says what non-streaming says: for random scripted model outputs (reasoning, content and tool calls in
 * every shipped parser's format, with every reasoning parser), tokenized and delivered in random token chunks, the
 * streamed deltas reassemble to exactly the whole response's choice — content, reasoning, tool names, arguments, ids
 * and finish reason. Both go through the same {@link ResponseShape} the chat path builds; only {@code stream}
 * differs ({@code parallel_tool_calls} varies too: false keeps the first call on both). Anthropic's Messages API
 * renders the same choice: its streamed events, accumulated as an SDK accumulates them (blocks by index, deltas
 * appended, {@code input_json_delta} parsed at the block's end), give the whole message's content blocks and stop
 * reason. OpenAI's Responses API likewise: its typed events, accumulated as an SDK accumulates them (items by
 * {@code output_index}, text, reasoning and argument deltas appended), give the whole response's output items,
 * and so does the response {@code response.completed} carries.
 */
class StreamingParityPropertyTest {

    private static final Tokenizer CL100K = new Cl100kTokenizer();
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final List<String> PARSERS = List.of("hermes", "llama3-json", "mistral", "deepseek-v3");
    /** DeepSeek V3's markers, as its chat template writes them. */
    private static final String DS_CALLS_BEGIN = "<｜tool▁calls▁begin｜>";
    private static final String DS_CALLS_END = "<｜tool▁calls▁end｜>";
    private static final String DS_CALL_BEGIN = "<｜tool▁call▁begin｜>";
    private static final String DS_CALL_END = "<｜tool▁call▁end｜>";
    private static final String DS_SEP = "<｜tool▁sep｜>";
    private static final String WORDS = "abcdefghijklmnopqrstuvwxyz ABCXYZ 0123456789 .,;:!?-'\"\n\téü漢字😀";

    /** One scripted output and what a client should get from it. */
    record Script(String parser, ReasoningParser reasoning, String text, boolean parallel) {
    }

    /** A choice as the client assembles it. */
    record Assembled(String content, String reasoning, List<String> calls, String finishReason) {
    }

    @Property(tries = 400, seed = "20261203")
    void streamedDeltasReassembleToTheWholeChoice(@ForAll long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Script script = script(random);
        int[] ids = CL100K.encode(script.text());
        List<int[]> chunks = chunks(ids, random);

        Assembled whole = whole(script, chunks);
        Assembled streamed = streamed(script, chunks);

        assertThat(streamed).as("%s / %s: %s", script.parser(), script.reasoning() == null ? "-" : script.reasoning().name(),
                script.text()).isEqualTo(whole);
    }

    @Property(tries = 300, seed = "20261204")
    void anthropicEventsReassembleToTheWholeMessage(@ForAll long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Script script = script(random);
        List<int[]> chunks = chunks(CL100K.encode(script.text()), random);
        TokenUsage usage = new TokenUsage(10, 5, 0);

        ResponseAssembler wholeAssembler = shape(script, false).assembler();
        feed(wholeAssembler, chunks, new ArrayList<>());
        ChoiceResult result = wholeAssembler.results().get(0);
        JsonNode whole = JSON.readTree(new MessageRenderer(JSON, "msg_1", "m").message(result, null, usage));

        List<OutputEvent> events = new ArrayList<>();
        feed(shape(script, true).assembler(), chunks, events);
        MessageStream stream = new MessageStream(JSON, new MessageRenderer(JSON, "msg_1", "m"));
        List<MessageStream.Event> sse = new ArrayList<>(stream.start(usage));
        for (OutputEvent e : events) {
            if (e instanceof OutputEvent.Delta d) {
                sse.addAll(stream.delta(d));
            } else if (e instanceof OutputEvent.Done d) {
                sse.addAll(stream.done(d.finishReason(), null, usage));
            }
        }
        ObjectNode accumulated = accumulate(sse);

        assertThat(accumulated.get("content")).as("%s: %s", script.parser(), script.text()).isEqualTo(whole.get("content"));
        assertThat(accumulated.get("stop_reason")).isEqualTo(whole.get("stop_reason"));
    }

    @Property(tries = 300, seed = "20261205")
    void responsesEventsReassembleToTheWholeResponse(@ForAll long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Script script = script(random);
        List<int[]> chunks = chunks(CL100K.encode(script.text()), random);
        TokenUsage usage = new TokenUsage(10, 5, 0);
        ResponseObjects objects = new ResponseObjects(JSON, "r1", 0, "m", JSON.createObjectNode());

        ResponseAssembler wholeAssembler = shape(script, false).assembler();
        feed(wholeAssembler, chunks, new ArrayList<>());
        ChoiceResult result = wholeAssembler.results().get(0);
        JsonNode whole = objects.response(ResponseObjects.status(result.finishReason()), objects.output(result), usage, 1L,
                null);

        List<OutputEvent> events = new ArrayList<>();
        feed(shape(script, true).assembler(), chunks, events);
        ResponseEvents stream = new ResponseEvents(JSON, objects);
        List<ResponseEvents.Event> sse = new ArrayList<>(stream.start());
        for (OutputEvent e : events) {
            if (e instanceof OutputEvent.Delta d) {
                sse.addAll(stream.delta(d));
            } else if (e instanceof OutputEvent.Done d) {
                sse.addAll(stream.done(d.finishReason(), usage, 1L));
            }
        }
        String label = script.parser() + ": " + script.text();
        assertThat(accumulateResponse(sse)).as(label).isEqualTo(whole.get("output"));
        JsonNode completed = sse.get(sse.size() - 1).data().get("response");
        assertThat(completed).as(label).isEqualTo(whole);
    }

    /** The output items an OpenAI SDK builds from Responses events, checking their order and sequence numbers. */
    private static ArrayNode accumulateResponse(List<ResponseEvents.Event> events) {
        ArrayNode output = JSON.createArrayNode();
        for (int i = 0; i < events.size(); i++) {
            JsonNode data = events.get(i).data();
            assertThat(data.get("sequence_number").intValue()).isEqualTo(i);
            String type = data.get("type").stringValue();
            int index = data.path("output_index").asInt(-1);
            ObjectNode item = index >= 0 && index < output.size() ? (ObjectNode) output.get(index) : null;
            switch (type) {
                case "response.created", "response.in_progress", "response.completed", "response.incomplete" -> { }
                case "response.output_item.added" -> {
                    assertThat(index).as("items are numbered in order").isEqualTo(output.size());
                    output.add(data.get("item").deepCopy());
                }
                case "response.content_part.added" -> ((ArrayNode) item.get("content")).add(data.get("part").deepCopy());
                case "response.output_text.delta", "response.reasoning_text.delta" -> {
                    ObjectNode part = (ObjectNode) item.get("content").get(data.get("content_index").intValue());
                    part.put("text", part.get("text").stringValue() + data.get("delta").stringValue());
                }
                case "response.function_call_arguments.delta" ->
                        item.put("arguments", item.get("arguments").stringValue() + data.get("delta").stringValue());
                case "response.output_text.done", "response.reasoning_text.done" -> assertThat(data.get("text"))
                        .isEqualTo(item.get("content").get(data.get("content_index").intValue()).get("text"));
                case "response.function_call_arguments.done" ->
                        assertThat(data.get("arguments")).isEqualTo(item.get("arguments"));
                case "response.content_part.done" -> assertThat(data.get("part"))
                        .isEqualTo(item.get("content").get(data.get("content_index").intValue()));
                case "response.output_item.done" -> {
                    ObjectNode done = (ObjectNode) data.get("item");
                    assertThat(done.get("id")).isEqualTo(item.get("id"));
                    output.set(index, done.deepCopy());
                }
                default -> throw new AssertionError("unexpected event " + type);
            }
        }
        return output;
    }

    /** The message an Anthropic SDK builds from the events: blocks by index, deltas appended, tool input parsed. */
    private static ObjectNode accumulate(List<MessageStream.Event> events) {
        ObjectNode message = null;
        Map<Integer, StringBuilder> partialJson = new LinkedHashMap<>();
        for (MessageStream.Event e : events) {
            JsonNode data = JSON.readTree(e.data());
            switch (e.name()) {
                case "message_start" -> message = (ObjectNode) data.get("message").deepCopy();
                case "content_block_start" -> {
                    ArrayNode content = (ArrayNode) message.get("content");
                    assertThat(data.get("index").intValue()).as("blocks are numbered in order").isEqualTo(content.size());
                    content.add(data.get("content_block").deepCopy());
                }
                case "content_block_delta" -> {
                    int index = data.get("index").intValue();
                    ObjectNode block = (ObjectNode) message.get("content").get(index);
                    JsonNode delta = data.get("delta");
                    switch (delta.get("type").stringValue()) {
                        case "text_delta" -> block.put("text", block.get("text").stringValue() + delta.get("text").stringValue());
                        case "thinking_delta" -> block.put("thinking",
                                block.get("thinking").stringValue() + delta.get("thinking").stringValue());
                        case "input_json_delta" -> partialJson.computeIfAbsent(index, i -> new StringBuilder())
                                .append(delta.get("partial_json").stringValue());
                        default -> throw new AssertionError("unexpected delta " + delta);
                    }
                }
                case "content_block_stop" -> {
                    int index = data.get("index").intValue();
                    StringBuilder json = partialJson.remove(index);
                    if (json != null) {
                        ((ObjectNode) message.get("content").get(index)).set("input", JSON.readTree(json.toString()));
                    }
                }
                case "message_delta" -> message.put("stop_reason", data.get("delta").get("stop_reason").stringValue());
                case "ping", "message_stop" -> { }
                default -> throw new AssertionError("unexpected event " + e.name());
            }
        }
        return message;
    }

    private static Script script(SplittableRandom random) {
        String parser = random.nextInt(5) == 0 ? null : PARSERS.get(random.nextInt(PARSERS.size()));
        ReasoningParser reasoning = switch (random.nextInt(3)) {
            case 0 -> null;
            case 1 -> ReasoningParser.DEEPSEEK_R1;
            default -> ReasoningParser.QWEN3;
        };
        StringBuilder text = new StringBuilder();
        if (reasoning != null) {
            boolean thinks = reasoning.startsInReasoning() || random.nextBoolean();
            if (thinks) {
                text.append(reasoning.startsInReasoning() ? "" : reasoning.startTag()).append(words(random, 1, 40))
                        .append(reasoning.endTag());
            }
        }
        int calls = parser == null ? 0 : random.nextInt(4);
        // Llama 3's JSON calls are the whole answer when there are any; the others may follow text
        String content = calls > 0 && "llama3-json".equals(parser) ? "" : words(random, 0, 30);
        text.append(content);
        List<String[]> callList = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            callList.add(new String[]{name(random), json(random, 0)});
        }
        if (!callList.isEmpty()) {
            text.append(render(parser, callList));
        }
        return new Script(parser, reasoning, text.toString(), random.nextInt(4) != 0);
    }

    private static String render(String parser, List<String[]> calls) {
        StringBuilder out = new StringBuilder();
        switch (parser) {
            case "hermes" -> calls.forEach(c -> out.append("<tool_call>\n{\"name\": \"").append(c[0])
                    .append("\", \"arguments\": ").append(c[1]).append("}\n</tool_call>\n"));
            case "llama3-json" -> {
                for (int i = 0; i < calls.size(); i++) {
                    out.append(i == 0 ? "" : "; ").append("{\"name\": \"").append(calls.get(i)[0])
                            .append("\", \"parameters\": ").append(calls.get(i)[1]).append('}');
                }
            }
            case "mistral" -> {
                out.append("[TOOL_CALLS] [");
                for (int i = 0; i < calls.size(); i++) {
                    out.append(i == 0 ? "" : ", ").append("{\"name\": \"").append(calls.get(i)[0])
                            .append("\", \"arguments\": ").append(calls.get(i)[1]).append('}');
                }
                out.append(']');
            }
            case "deepseek-v3" -> {
                out.append(DS_CALLS_BEGIN);
                calls.forEach(c -> out.append(DS_CALL_BEGIN).append("function")
                        .append(DS_SEP).append(c[0]).append("\n```json\n").append(c[1]).append("\n```")
                        .append(DS_CALL_END));
                out.append(DS_CALLS_END);
            }
            default -> throw new IllegalArgumentException(parser);
        }
        return out.toString();
    }

    private static String words(SplittableRandom random, int min, int max) {
        int n = min + random.nextInt(max - min + 1);
        StringBuilder out = new StringBuilder();
        int[] cps = WORDS.codePoints().toArray();
        for (int i = 0; i < n; i++) {
            out.appendCodePoint(cps[random.nextInt(cps.length)]);
        }
        return out.toString();
    }

    private static String name(SplittableRandom random) {
        StringBuilder out = new StringBuilder();
        int n = 1 + random.nextInt(12);
        for (int i = 0; i < n; i++) {
            out.append("abcdefghijklmnopqrstuvwxyz_".charAt(random.nextInt(27)));
        }
        return out.toString();
    }

    /** A JSON object with keys, strings (escapes, non-ASCII), numbers, booleans, null and nesting. */
    private static String json(SplittableRandom random, int depth) {
        Map<String, String> fields = new LinkedHashMap<>();
        int n = random.nextInt(depth == 0 ? 5 : 3);
        for (int i = 0; i < n; i++) {
            fields.put(name(random), value(random, depth));
        }
        StringBuilder out = new StringBuilder("{");
        fields.forEach((k, v) -> out.append(out.length() == 1 ? "" : ", ").append('"').append(k).append("\": ").append(v));
        return out.append('}').toString();
    }

    private static String value(SplittableRandom random, int depth) {
        return switch (random.nextInt(depth < 2 ? 8 : 6)) {
            case 0 -> Integer.toString(random.nextInt(-1000, 1000));
            case 1 -> "true";
            case 2 -> "null";
            case 3 -> Double.toString(Math.round(random.nextDouble() * 1e4) / 100.0);
            case 4, 5 -> '"' + words(random, 0, 12).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")
                    .replace("\t", "\\t") + (random.nextInt(4) == 0 ? "\\u00e9\\\"" : "") + '"';
            case 6 -> json(random, depth + 1);
            default -> "[" + value(random, depth + 1) + ", " + value(random, depth + 1) + "]";
        };
    }

    /** Token ids in chunks of 1 to 4, as a worker streams them. */
    private static List<int[]> chunks(int[] ids, SplittableRandom random) {
        List<int[]> out = new ArrayList<>();
        for (int from = 0; from < ids.length; ) {
            int to = Math.min(ids.length, from + 1 + random.nextInt(4));
            out.add(Arrays.copyOfRange(ids, from, to));
            from = to;
        }
        return out;
    }

    private static ResponseShape shape(Script script, boolean stream) {
        ToolCallParser parser = script.parser() == null ? null : ToolCallParsers.named(script.parser()).orElseThrow();
        ModelOutput model = ModelOutput.of(CL100K, parser, script.reasoning());
        Supplier<io.flotilla.gateway.toolcall.ToolCallStream> tools = parser == null ? null : () -> {
            AtomicInteger n = new AtomicInteger();
            return parser.stream(() -> "call_" + n.incrementAndGet());
        };
        return new ResponseShape(1, stream, List.of(), model, script.reasoning(), tools, script.parallel(), false, false, 0);
    }

    private static void feed(ResponseAssembler assembler, List<int[]> chunks, List<OutputEvent> out) {
        Instant at = Instant.EPOCH;
        for (int[] chunk : chunks) {
            out.addAll(assembler.apply(new RequestEvent.Tokens(chunk, at, false, null)));
        }
        out.addAll(assembler.apply(new RequestEvent.Finished(FinishReason.FINISH_REASON_STOP)));
        assertThat(out.get(out.size() - 1)).isInstanceOf(OutputEvent.End.class);
    }

    private static Assembled whole(Script script, List<int[]> chunks) {
        ResponseAssembler assembler = shape(script, false).assembler();
        feed(assembler, chunks, new ArrayList<>());
        ChoiceResult r = assembler.results().get(0);
        List<String> calls = new ArrayList<>();
        for (ToolCalls.Call c : r.toolCalls()) {
            calls.add(c.id() + " " + c.name() + " " + c.arguments());
        }
        return new Assembled(r.content() == null ? "" : r.content(), r.reasoning() == null ? "" : r.reasoning(), calls,
                r.finishReason());
    }

    private static Assembled streamed(Script script, List<int[]> chunks) {
        List<OutputEvent> events = new ArrayList<>();
        feed(shape(script, true).assembler(), chunks, events);
        StringBuilder content = new StringBuilder();
        StringBuilder reasoning = new StringBuilder();
        List<String[]> calls = new ArrayList<>(); // id, name, arguments
        String finish = null;
        for (OutputEvent e : events) {
            if (e instanceof OutputEvent.Delta d) {
                content.append(d.content());
                reasoning.append(d.reasoning());
                for (ToolCallDelta t : d.toolCalls()) {
                    if (t.first()) {
                        assertThat(t.index()).as("calls are numbered in order").isEqualTo(calls.size());
                        calls.add(new String[]{t.id(), t.name(), t.arguments()});
                    } else {
                        String[] call = calls.get(t.index());
                        call[2] += t.arguments();
                    }
                }
            } else if (e instanceof OutputEvent.Done d) {
                finish = d.finishReason();
            }
        }
        return new Assembled(content.toString(), reasoning.toString(),
                calls.stream().map(c -> c[0] + " " + c[1] + " " + c[2]).toList(), finish);
    }
}
