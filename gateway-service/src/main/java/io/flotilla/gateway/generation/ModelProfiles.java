package io.flotilla.gateway.generation;

import io.flotilla.gateway.flow.FlowLimits;
import io.flotilla.gateway.output.ModelOutput;
import io.flotilla.gateway.reasoning.ReasoningParser;
import io.flotilla.gateway.tokenize.ChatMessage;
import io.flotilla.gateway.tokenize.ChatMlTemplate;
import io.flotilla.gateway.tokenize.ChatPromptCache;
import io.flotilla.gateway.toolcall.HermesToolParser;
import io.flotilla.gateway.toolcall.ToolCallParser;
import io.flotilla.gateway.toolcall.ToolCallParsers;
import io.flotilla.gateway.tokenize.ModelTokenization;
import io.flotilla.gateway.tokenize.ModelTokenizations;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-model settings resolved against what is built in: tokenizer, chat template, output parsers,
 * context limit, flow-control limits and block identity. Tokenizers and templates are resolved at start-up by
 * {@link ModelTokenizations}, so a typo or a broken model directory fails startup instead of requests.
 */
public final class ModelProfiles {

    private final GenerationSettings settings;
    private final ModelTokenizations tokenizations;
    private final Map<String, BlockHasher> hashers = new ConcurrentHashMap<>();
    private final Map<String, ModelOutput> outputs = new ConcurrentHashMap<>();
    private final ChatPromptCache promptCache;

    /** @throws IllegalStateException naming the model when a configured parser does not exist */
    public ModelProfiles(GenerationSettings settings, ModelTokenizations tokenizations) {
        this.settings = settings;
        this.tokenizations = tokenizations;
        this.promptCache = new ChatPromptCache(settings.promptCacheEnabled(), settings.promptCacheMaxBytes());
        settings.models().keySet().forEach(this::output);
    }

    /**
     * How {@code model}'s output is read: its tool-call parser (configured, else {@code hermes} for the
     * built-in ChatML template, which renders tools in that format) and reasoning parser.
     */
    public ModelOutput output(String model) {
        return outputs.computeIfAbsent(model, m -> {
            GenerationSettings.Model config = settings.model(m);
            ModelTokenization t = tokenization(m);
            String tool = config.toolParser() != null ? config.toolParser()
                    : t.template() instanceof ChatMlTemplate ? HermesToolParser.NAME : "none";
            ToolCallParser toolParser = tool.equals("none") ? null : ToolCallParsers.named(tool).orElseThrow(() ->
                    new IllegalStateException("model '" + m + "': unknown tool-parser '" + tool + "' (known: "
                            + ToolCallParsers.names() + ", none)"));
            String reasoning = config.reasoningParser();
            ReasoningParser reasoningParser = reasoning == null || reasoning.equals("none") ? null
                    : ReasoningParser.named(reasoning).orElseThrow(() -> new IllegalStateException("model '" + m
                    + "': unknown reasoning-parser '" + reasoning + "' (known: " + ReasoningParser.names() + ", none)"));
            return ModelOutput.of(t.tokenizer(), toolParser, reasoningParser);
        });
    }

    public ModelTokenization tokenization(String model) {
        return tokenizations.of(model);
    }

    /**
     * The chat prompt of {@code messages} for {@code model}: ids equal to its tokenization's
     * {@link ModelTokenization#chatPrompt}, the history's taken from {@link #promptCache()} where that is exact.
     *
     * @throws io.flotilla.gateway.tokenize.TemplateRejectedException when the template refuses the conversation
     */
    public ChatPromptCache.Prompt chatPrompt(String model, List<ChatMessage> messages, List<Map<String, Object>> tools) {
        return promptCache.chatPrompt(model, tokenization(model), messages, tools);
    }

    public ChatPromptCache promptCache() {
        return promptCache;
    }

    public int maxContext(String model) {
        return settings.model(model).maxContext();
    }

    public boolean allowDisagg(String model) {
        return settings.model(model).allowDisagg();
    }

    public FlowLimits flowLimits(String model) {
        return settings.model(model).flowLimits();
    }

    /**
     * The hasher of {@code model}'s namespace {@code (model, tokenizer id, kv layout)} at the block size
     * its workers advertise; the layout is the configured one or {@code bf16/bs<blockSize>/paged}.
     */
    public BlockHasher hasher(String model, int blockSize) {
        return hashers.computeIfAbsent(model + "\0" + blockSize, k -> {
            GenerationSettings.Model m = settings.model(model);
            String layout = m.kvLayout() == null || m.kvLayout().isBlank()
                    ? KvNamespace.pagedLayout("bf16", blockSize) : m.kvLayout();
            return new BlockHasher(KvNamespace.of(model, tokenization(model).tokenizer().id(), layout), blockSize);
        });
    }
}
