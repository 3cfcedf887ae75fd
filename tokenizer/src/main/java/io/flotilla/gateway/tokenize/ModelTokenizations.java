package io.flotilla.gateway.tokenize;

import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The tokenization of every model, resolved once at start-up so that a bad configuration (unknown
 * tokenizer or template, a model directory without {@code tokenizer.json}, a template that does not
 * parse) stops the gateway with a message naming the model instead of failing requests. Owns the
 * tokenizers it loaded from model directories and frees them in {@link #close()}.
 *
 * <p>A model without a model directory uses the built-in tokenizer and template its configuration
 * names (default {@code cl100k_base} and {@code chatml}). A model with one uses its {@code tokenizer.json}
 * and, unless a built-in template is named, its own Jinja template ({@link HfModelDirectory}).
 *
 * <p>A model that is not configured takes its tokenization from its workers' registration
 * ({@link #reconcile}): {@code builtin:cl100k_base} (the simulated model) gives cl100k_base and ChatML; a
 * tokenizer source that is a directory on this host is loaded like a model directory; anything else is an
 * explicit error naming the tokenizer and where it comes from. A configured model whose tokenizer id
 * differs from its workers' is an error too. The gateway never tokenizes a model with a tokenizer its
 * workers do not hash with.
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
    /** Unconfigured models resolved from their workers' registration, by model and (tokenizer id, source). */
    private final Map<String, Learned> learned = new java.util.concurrent.ConcurrentHashMap<>();
    private final ModelTokenization defaults;
    private final Clock clock;

    /** A registration-derived tokenization, or why there is none. */
    private record Learned(String tokenizerId, String source, ModelTokenization tokenization, String problem) {
    }

    /**
     * @param models     configured models
     * @param tokenizers built-in tokenizers by id
     * @param templates  built-in chat templates by id
     * @param clock      time source of Jinja templates' {@code strftime_now}
     * @throws IllegalStateException naming the model when its configuration cannot be honoured
     */
    public ModelTokenizations(Map<String, Spec> models, Map<String, Tokenizer> tokenizers,
                              Map<String, ChatTemplate> templates, Clock clock) {
        this.clock = clock;
        try {
            defaults = resolve("(default)", new Spec(null, null, null), tokenizers, templates, clock);
            models.forEach((model, spec) -> configured.put(model, resolve(model, spec, tokenizers, templates, clock)));
        } catch (RuntimeException e) {
            close();
            throw e instanceof IllegalStateException ? e : new IllegalStateException(e.getMessage(), e);
        }
    }

    /**
     * The tokenization of {@code model}: its configured one, else the one its workers registered (see
     * {@link #reconcile}), else the built-in default (only for workers that register no tokenizer).
     */
    public ModelTokenization of(String model) {
        ModelTokenization c = configured.get(model);
        if (c != null) {
            return c;
        }
        Learned l = learned.get(model);
        if (l != null && l.tokenization() != null) {
            return l.tokenization();
        }
        if (l != null) {
            throw new IllegalStateException("model '" + model + "': " + l.problem());
        }
        return defaults;
    }

    /**
     * Compares the gateway's tokenizer for {@code model} with the one its workers registered and, for a model
     * the gateway has no configuration for, adopts theirs when it can be loaded here.
     *
     * @param tokenizerId     the workers' tokenizer id ("" from workers that register none: the defaults apply)
     * @param tokenizerSource where the workers say it can be loaded ({@code builtin:cl100k_base}, a directory)
     * @return why the model cannot be served by this gateway, or empty
     */
    public Optional<String> reconcile(String model, String tokenizerId, String tokenizerSource) {
        ModelTokenization c = configured.get(model);
        if (tokenizerId == null || tokenizerId.isEmpty()) {
            return Optional.empty(); // an agent that registers no tokenizer: nothing to compare with
        }
        if (c != null) {
            String mine = c.tokenizer().id();
            return mine.equals(tokenizerId) ? Optional.empty() : Optional.of("the gateway tokenizes it with '" + mine
                    + "' but its workers hash with tokenizer '" + tokenizerId + "' (from '" + tokenizerSource
                    + "'); set flotilla.gateway.models." + model + ".tokenizer (or model-dir) to the workers' tokenizer,"
                    + " or flotilla.worker.tokenizer-id to '" + mine + "'");
        }
        Learned l = learned.get(model);
        if (l == null || !l.tokenizerId().equals(tokenizerId) || !l.source().equals(tokenizerSource)) {
            Learned fresh = learn(model, tokenizerId, tokenizerSource);
            Learned old = learned.put(model, fresh);
            release(old);
            l = fresh;
        }
        return l.problem().isEmpty() ? Optional.empty() : Optional.of(l.problem());
    }

    private Learned learn(String model, String tokenizerId, String source) {
        if (source.equals("builtin:" + DEFAULT_TOKENIZER) && tokenizerId.equals(defaults.tokenizer().id())) {
            return new Learned(tokenizerId, source, defaults, "");
        }
        Path dir = source.startsWith("builtin:") ? null : Path.of(source);
        if (dir == null || !java.nio.file.Files.isDirectory(dir)) {
            return new Learned(tokenizerId, source, null, "it is not configured at the gateway and its workers hash with "
                    + "tokenizer '" + tokenizerId + "' from '" + source + "', which this gateway cannot load (not a built-in "
                    + "tokenizer, not a directory here); set flotilla.gateway.models." + model + ".model-dir to a copy of "
                    + "that tokenizer (hf download " + source + " tokenizer.json tokenizer_config.json --local-dir DIR)");
        }
        try {
            return new Learned(tokenizerId, source, HfModelDirectory.load(model, dir, tokenizerId, null, clock), "");
        } catch (RuntimeException e) {
            return new Learned(tokenizerId, source, null, "its workers' tokenizer '" + tokenizerId + "' from " + dir
                    + " does not load: " + e.getMessage());
        }
    }

    private void release(Learned l) {
        if (l != null && l.tokenization() != null && l.tokenization() != defaults) {
            closeTokenizer(l.tokenization());
        }
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
        configured.values().forEach(ModelTokenizations::closeTokenizer);
        learned.values().forEach(this::release);
    }

    private static void closeTokenizer(ModelTokenization t) {
        if (t.tokenizer() instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the tokenizer " + t.tokenizer().id(), e);
            }
        }
    }
}
