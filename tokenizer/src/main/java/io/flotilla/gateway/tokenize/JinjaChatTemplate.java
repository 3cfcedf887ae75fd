package io.flotilla.gateway.tokenize;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.tree.Node;
import io.flotilla.gateway.jinja.HfJinjaEnvironment;
import io.flotilla.gateway.jinja.JsonValues;

import java.time.Clock;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * A model's own chat template (Jinja, from {@code tokenizer_config.json} or {@code chat_template.jinja}),
 * rendered as transformers' {@code apply_chat_template(messages, tools=tools, add_generation_prompt=True)}
 * and vLLM render it: the variables are {@code messages} (maps of {@code role}, {@code content} and,
 * when given, {@code name}, {@code tool_calls} — {@code [{id, type: "function", function: {name,
 * arguments}}]} with the arguments parsed from JSON, as vLLM passes them —, {@code tool_call_id} and
 * {@code reasoning_content}), {@code tools} (only when the request has tools: transformers' JSON schemas,
 * OpenAI's {@code {"type": "function", "function": {…}}}), {@code add_generation_prompt = true} and the
 * tokenizer's special tokens ({@code bos_token}, {@code eos_token}, …). The prompt usually starts with
 * the BOS token the template writes, so it is tokenized without adding special tokens again. The
 * {@code developer} role is passed as {@code system}, which is what model templates know.
 *
 * <p>The template is parsed once; {@link #render} is thread-safe. A template that refuses a
 * conversation with {@code raise_exception} (say, roles that do not alternate) throws
 * {@link TemplateRejectedException}; any other render failure is an {@link IllegalStateException}.
 */
public final class JinjaChatTemplate implements ChatTemplate {

    private static final List<ChatMessage> PROBE = List.of(new ChatMessage("user", null, "Hello"));

    private final String id;
    private final Jinjava jinjava;
    private final Node root;
    private final Map<String, Object> specialTokens;
    private final Clock clock;

    private JinjaChatTemplate(String id, Jinjava jinjava, Node root, Map<String, Object> specialTokens, Clock clock) {
        this.id = id;
        this.jinjava = jinjava;
        this.root = root;
        this.specialTokens = specialTokens;
        this.clock = clock;
    }

    /**
     * Parses {@code source} and renders a one-message conversation with it, so that a template this
     * renderer cannot handle fails here, at start-up, and not on the first request.
     *
     * @param id            where the template came from (for messages)
     * @param specialTokens {@code bos_token}, {@code eos_token}, … as the template sees them
     * @param clock         the time {@code strftime_now} reports
     * @throws IllegalArgumentException when the template does not parse or cannot render {@code [user: "Hello"]}
     */
    public static JinjaChatTemplate compile(String id, String source, Map<String, String> specialTokens, Clock clock) {
        Jinjava jinjava = HfJinjaEnvironment.create();
        JinjavaInterpreter parser = jinjava.newInterpreter();
        Node root;
        JinjavaInterpreter.pushCurrent(parser);
        try {
            root = parser.parse(HfJinjaEnvironment.pythonPrecedence(source));
        } finally {
            JinjavaInterpreter.popCurrent();
        }
        List<TemplateError> errors = fatal(parser.getErrorsCopy());
        if (!errors.isEmpty()) {
            throw new IllegalArgumentException("chat template " + id + " does not parse: " + describe(errors));
        }
        JinjaChatTemplate template = new JinjaChatTemplate(id, jinjava, root, Map.copyOf(specialTokens), clock);
        try {
            template.render(PROBE);
        } catch (TemplateRejectedException | IllegalStateException e) {
            throw new IllegalArgumentException("chat template " + id + " cannot render a single user message: "
                    + e.getMessage(), e);
        }
        return template;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public String render(List<ChatMessage> messages, List<Map<String, Object>> tools) {
        JinjavaInterpreter interpreter = jinjava.newInterpreter();
        Context context = interpreter.getContext();
        AtomicReference<String> raised = new AtomicReference<>();
        context.putAll(specialTokens);
        context.put("messages", asMaps(messages));
        if (!tools.isEmpty()) {
            context.put("tools", tools);
        }
        context.put("add_generation_prompt", true);
        context.put("strftime_now", "strftime_now"); // so that `strftime_now is defined`, as in transformers
        context.put(HfJinjaEnvironment.NOW, ZonedDateTime.now(clock));
        context.put(HfJinjaEnvironment.RAISED, raised);
        String out;
        JinjavaInterpreter.pushCurrent(interpreter);
        try {
            out = interpreter.render(root);
        } finally {
            JinjavaInterpreter.popCurrent();
        }
        if (raised.get() != null) {
            throw new TemplateRejectedException("The model's chat template rejected the conversation: " + raised.get());
        }
        List<TemplateError> errors = fatal(interpreter.getErrorsCopy());
        if (!errors.isEmpty()) {
            throw new IllegalStateException("chat template " + id + " failed: " + describe(errors));
        }
        return out;
    }

    private static List<Map<String, Object>> asMaps(List<ChatMessage> messages) {
        List<Map<String, Object>> maps = new ArrayList<>(messages.size());
        for (ChatMessage m : messages) {
            Map<String, Object> map = new LinkedHashMap<>();
            map.put("role", "developer".equals(m.role()) ? "system" : m.role());
            map.put("content", m.content());
            if (m.name() != null && !m.name().isEmpty()) {
                map.put("name", m.name());
            }
            if (!m.toolCalls().isEmpty()) {
                List<Map<String, Object>> calls = new ArrayList<>();
                for (ChatMessage.ToolCall c : m.toolCalls()) {
                    Map<String, Object> function = new LinkedHashMap<>();
                    function.put("name", c.name());
                    function.put("arguments", JsonValues.parseOrKeep(c.arguments()));
                    Map<String, Object> call = new LinkedHashMap<>();
                    call.put("id", c.id());
                    call.put("type", "function");
                    call.put("function", function);
                    calls.add(call);
                }
                map.put("tool_calls", calls);
            }
            if (m.toolCallId() != null) {
                map.put("tool_call_id", m.toolCallId());
            }
            if (m.reasoningContent() != null) {
                map.put("reasoning_content", m.reasoningContent());
            }
            maps.add(map);
        }
        return maps;
    }

    private static List<TemplateError> fatal(List<TemplateError> errors) {
        return errors.stream().filter(e -> e.getSeverity() == TemplateError.ErrorType.FATAL).toList();
    }

    private static String describe(List<TemplateError> errors) {
        return errors.stream()
                .map(e -> (e.getLineno() > 0 ? "line " + e.getLineno() + ": " : "") + e.getMessage())
                .distinct()
                .collect(Collectors.joining("; "));
    }
}
