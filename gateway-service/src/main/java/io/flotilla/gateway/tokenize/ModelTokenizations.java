package io.flotilla.gateway.tokenize;

import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;

/**
 * The tokenization of every model, resolved once at start-up so that a bad configuration (unknown
 * tokenizer or template, a model directory without {@code tokenizer.json}, a template that does not
 * parse) stops the gateway with a message naming the model instead of failing requests. Owns the
 * tokenizers it loaded from model directories and frees them in {@link #close()}.
 *
 * <p>A model without a model directory uses the built-in tokenizer and template its configuration
 * names (default {@code cl100k_base} and {@code chatml}); so does every model that is not configured.
 * A model with one uses its {@code tokenizer.json} and, unless a built-in template is named, its own
 * Jinja template ({@link HfModelDirectory}).
 */
public final class ModelTokenizations implements AutoCloseable {

    public static final String DEFAULT_TOKENIZER = Cl100kTokenizer.ID;
    public static final String DEFAULT_CHAT_TEMPLATE = ChatMlTemplate.ID;

    /**
     * How one model is configured; every field may be null.
     *
     * @param tokenizer    built-in tokenizer id; with a model directory, the tokenizer id of the block-hash
     *                     namespace instead
     * @param chatTemplate built-in chat template; with a model directory, overrides the directory's template
     * @param modelDir     HuggingFace model directory
     */
    public record Spec(String tokenizer, String chatTemplate, Path modelDir) {
    }

    private final Map<String, ModelTokenization> configured = new HashMap<>();
    private final ModelTokenization defaults;

    /**
     * @param models     configured models
     * @param tokenizers built-in tokenizers by id
     * @param templates  built-in chat templates by id
     * @param clock      time source of Jinja templates' {@code strftime_now}
     * @throws IllegalStateException naming the model when its configuration cannot be honoured
     */
    public ModelTokenizations(Map<String, Spec> models, Map<String, Tokenizer> tokenizers,
                              Map<String, ChatTemplate> templates, Clock clock) {
        try {
            defaults = resolve("(default)", new Spec(null, null, null), tokenizers, templates, clock);
            models.forEach((model, spec) -> configured.put(model, resolve(model, spec, tokenizers, templates, clock)));
        } catch (RuntimeException e) {
            close();
            throw e instanceof IllegalStateException ? e : new IllegalStateException(e.getMessage(), e);
        }
    }

    /** The tokenization of {@code model}: its configured one, or the built-in default. */
    public ModelTokenization of(String model) {
        return configured.getOrDefault(model, defaults);
    }

    private static ModelTokenization resolve(String model, Spec spec, Map<String, Tokenizer> tokenizers,
                                             Map<String, ChatTemplate> templates, Clock clock) {
        ChatTemplate template = null;
        if (spec.chatTemplate() != null && !spec.chatTemplate().isBlank()) {
            template = builtIn(model, "chat template", spec.chatTemplate(), templates);
        }
        if (spec.modelDir() != null) {
            return HfModelDirectory.load(model, spec.modelDir(), spec.tokenizer(), template, clock);
        }
        String tokenizer = spec.tokenizer() == null || spec.tokenizer().isBlank() ? DEFAULT_TOKENIZER : spec.tokenizer();
        return new ModelTokenization(builtIn(model, "tokenizer", tokenizer, tokenizers),
                template != null ? template : builtIn(model, "chat template", DEFAULT_CHAT_TEMPLATE, templates));
    }

    private static <T> T builtIn(String model, String what, String id, Map<String, T> available) {
        T found = available.get(id);
        if (found == null) {
            throw new IllegalStateException("model '" + model + "': unknown " + what + " '" + id + "' (built in: "
                    + available.keySet() + "; a HuggingFace model needs model-dir)");
        }
        return found;
    }

    @Override
    public void close() {
        for (ModelTokenization t : configured.values()) {
            if (t.tokenizer() instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing the tokenizer " + t.tokenizer().id(), e);
                }
            }
        }
    }
}
