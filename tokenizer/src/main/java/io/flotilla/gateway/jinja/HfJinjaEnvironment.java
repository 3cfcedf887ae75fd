package io.flotilla.gateway.jinja;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import com.hubspot.jinjava.lib.tag.Tag;
import com.hubspot.jinjava.tree.Node;
import com.hubspot.jinjava.tree.TagNode;
import jinjava.javax.el.CompositeELResolver;

import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Jinjava set up to render HuggingFace chat templates as transformers' {@code apply_chat_template}
 * does with Python's Jinja: {@code trim_blocks} and {@code lstrip_blocks}, Jinja's whitespace control
 * ({@code {%-}, {@code -}}}) and operator precedence (also of {@code not x is test}, see
 * {@link #pythonPrecedence}), Python's {@code iterable} test, Python {@code str} methods, a {@code tojson}
 * that prints like {@code json.dumps(ensure_ascii=False)}, the globals {@code raise_exception} and
 * {@code strftime_now}, and the {@code {% generation %}} block (rendered as its body).
 *
 * <p>Known differences from Python's Jinja, which make a template fail to parse or render (start-up
 * reports it): extended slices with a step ({@code [::-1]}), chained comparisons ({@code a < b < c}),
 * string repetition ({@code 'x' * 3}); booleans print as {@code true}/{@code false}.
 */
public final class HfJinjaEnvironment {

    /** Context key of the render's "now", read by {@code strftime_now}. */
    public static final String NOW = "__flotilla_now";
    /** Context key of an {@code AtomicReference<String>} in which {@code raise_exception} leaves its message. */
    public static final String RAISED = "__flotilla_raised";

    private HfJinjaEnvironment() {
    }

    public static Jinjava create() {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PythonStringMethods());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        JinjavaConfig config = JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                .withLstripBlocks(true)
                .withElResolver(resolver)
                .withLegacyOverrides(LegacyOverrides.newBuilder()
                        .withUseTrimmingForNotesAndExpressions(true)
                        .withParseWhitespaceControlStrictly(true)
                        .withUseNaturalOperatorPrecedence(true)
                        .withIterateOverMapKeys(true)
                        .withEvaluateMapKeys(true)
                        .withUsePyishObjectMapper(true)
                        .withKeepNullableLoopValues(true)
                        .withAllowAdjacentTextNodes(true)
                        .build())
                .build();
        Jinjava jinjava = new Jinjava(config);
        jinjava.registerExpTest(new PythonIterable());
        jinjava.registerFilter(new ToJson());
        jinjava.registerTag(new GenerationTag());
        jinjava.registerFunction(function("raise_exception", "raiseException", String.class));
        jinjava.registerFunction(function("strftime_now", "strftimeNow", String.class));
        return jinjava;
    }

    /** {@code not x is test} / {@code not x is not test} inside a tag or an expression. */
    private static final Pattern NOT_IS = Pattern.compile(
            "\\bnot\\s+([A-Za-z_][\\w.]*(?:\\[[^\\]]*\\])*)\\s+is\\s+(not\\s+)?([A-Za-z_]\\w*)");
    private static final Pattern CODE = Pattern.compile("\\{[%{].*?[%}]\\}", Pattern.DOTALL);

    /**
     * The template with Python's precedence made explicit where Jinjava's differs: Python reads
     * {@code not x is defined} as {@code not (x is defined)}, Jinjava as {@code (not x) is defined} (always
     * true), which turns Llama 3's {@code if not tools is defined} into "tools is none". Only code inside
     * {@code {% %}} and <code>{{ }}</code> is rewritten, never the template's text.
     */
    public static String pythonPrecedence(String source) {
        Matcher code = CODE.matcher(source);
        StringBuilder out = new StringBuilder(source.length() + 16);
        while (code.find()) {
            String block = NOT_IS.matcher(code.group()).replaceAll(m -> Matcher.quoteReplacement(
                    "not (" + m.group(1) + " is " + (m.group(2) == null ? "" : "not ") + m.group(3) + ")"));
            code.appendReplacement(out, Matcher.quoteReplacement(block));
        }
        code.appendTail(out);
        return out.toString();
    }

    /** Python's idea of iterable: strings, lists, dicts and sets are; numbers, booleans and None are not. */
    static final class PythonIterable implements ExpTest {

        @Override
        public String getName() {
            return "iterable";
        }

        @Override
        public boolean evaluate(Object var, JinjavaInterpreter interpreter, Object... args) {
            return var instanceof CharSequence || var instanceof Iterable<?> || var instanceof Map<?, ?>
                    || (var != null && var.getClass().isArray());
        }
    }

    private static ELFunctionDefinition function(String name, String method, Class<?>... params) {
        return new ELFunctionDefinition("", name, HfJinjaEnvironment.class, method, params);
    }

    /** Thrown by {@code raise_exception(message)}: the template refuses the conversation. */
    static final class TemplateRaised extends RuntimeException {
        TemplateRaised(String message) {
            super(message, null, false, false);
        }
    }

    /** {@code raise_exception(message)}; public for Jinjava's reflection. */
    public static String raiseException(String message) {
        JinjavaInterpreter current = JinjavaInterpreter.getCurrent();
        if (current != null && current.getContext().get(RAISED) instanceof AtomicReference<?> holder) {
            @SuppressWarnings("unchecked")
            AtomicReference<String> raised = (AtomicReference<String>) holder;
            raised.compareAndSet(null, message);
        }
        throw new TemplateRaised(message);
    }

    /** {@code strftime_now(format)} at the render's instant; public for Jinjava's reflection. */
    public static String strftimeNow(String format) {
        Object now = JinjavaInterpreter.getCurrent().getContext().get(NOW);
        if (!(now instanceof ZonedDateTime time)) {
            throw new IllegalStateException("strftime_now called outside a chat-template render");
        }
        return PythonStrftime.format(time, format);
    }

    /** HuggingFace's {@code tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)}. */
    static final class ToJson implements Filter {

        @Override
        public String getName() {
            return "tojson";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, args, Map.of());
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object indent = kwargs.containsKey("indent") ? kwargs.get("indent") : args.length > 1 ? args[1] : null;
            Object separators = kwargs.get("separators");
            Object sortKeys = kwargs.get("sort_keys");
            return PythonJson.dumps(var, indent == null ? null : ((Number) indent).intValue(),
                    separators instanceof List<?> pair ? pair.stream().map(String::valueOf).toList() : null,
                    Boolean.TRUE.equals(sortKeys));
        }
    }

    /** transformers' {@code {% generation %}…{% endgeneration %}} marks assistant text; rendering is the body. */
    static final class GenerationTag implements Tag {

        @Override
        public String getName() {
            return "generation";
        }

        @Override
        public String getEndTagName() {
            return "endgeneration";
        }

        @Override
        public String interpret(TagNode tagNode, JinjavaInterpreter interpreter) {
            StringBuilder out = new StringBuilder();
            for (Node child : tagNode.getChildren()) {
                out.append(child.render(interpreter).getValue());
            }
            return out.toString();
        }
    }
}
