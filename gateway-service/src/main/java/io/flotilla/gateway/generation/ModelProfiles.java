package io.flotilla.gateway.generation;

import io.flotilla.gateway.admission.AdmissionLimits;
import io.flotilla.gateway.config.GatewayProperties;
import io.flotilla.gateway.tokenize.ChatTemplate;
import io.flotilla.gateway.tokenize.ModelTokenization;
import io.flotilla.gateway.tokenize.Tokenizer;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-model settings resolved against what is built in: tokenizer, chat template, context limit,
 * admission limits and block identity. Every configured model's tokenizer and template are checked
 * at construction, so a typo fails startup instead of requests.
 */
public final class ModelProfiles {

    private final GatewayProperties properties;
    private final Map<String, Tokenizer> tokenizers;
    private final Map<String, ChatTemplate> templates;
    private final Map<String, BlockHasher> hashers = new ConcurrentHashMap<>();

    /**
     * @param tokenizers available tokenizers by id
     * @param templates  available chat templates by id
     */
    public ModelProfiles(GatewayProperties properties, Map<String, Tokenizer> tokenizers, Map<String, ChatTemplate> templates) {
        this.properties = properties;
        this.tokenizers = Map.copyOf(tokenizers);
        this.templates = Map.copyOf(templates);
        tokenization(properties.defaultModel());
        properties.models().keySet().forEach(this::tokenization);
    }

    public ModelTokenization tokenization(String model) {
        GatewayProperties.Model m = properties.model(model);
        Tokenizer tokenizer = tokenizers.get(m.tokenizerOrDefault());
        if (tokenizer == null) {
            throw new IllegalStateException("model '" + model + "': unknown tokenizer '" + m.tokenizerOrDefault()
                    + "' (available: " + tokenizers.keySet() + ")");
        }
        ChatTemplate template = templates.get(m.chatTemplateOrDefault());
        if (template == null) {
            throw new IllegalStateException("model '" + model + "': unknown chat template '" + m.chatTemplateOrDefault()
                    + "' (available: " + templates.keySet() + ")");
        }
        return new ModelTokenization(tokenizer, template);
    }

    public int maxContext(String model) {
        return properties.model(model).maxContextOrDefault();
    }

    public boolean allowDisagg(String model) {
        return properties.model(model).allowDisaggOrDefault();
    }

    public AdmissionLimits admission(String model) {
        GatewayProperties.Model m = properties.model(model);
        GatewayProperties.Admission a = properties.admission();
        return new AdmissionLimits(
                m.maxInFlight() != null ? m.maxInFlight() : a.maxInFlight(),
                m.maxQueued() != null ? m.maxQueued() : a.maxQueued(),
                m.queueTimeout() != null ? m.queueTimeout() : a.queueTimeout());
    }

    /**
     * The hasher of {@code model}'s namespace {@code (model, tokenizer id, kv layout)} at the block size
     * its workers advertise; the layout is the configured one or {@code bf16/bs<blockSize>/paged}.
     */
    public BlockHasher hasher(String model, int blockSize) {
        return hashers.computeIfAbsent(model + "\0" + blockSize, k -> {
            GatewayProperties.Model m = properties.model(model);
            String layout = m.kvLayout() == null || m.kvLayout().isBlank()
                    ? KvNamespace.pagedLayout("bf16", blockSize) : m.kvLayout();
            return new BlockHasher(KvNamespace.of(model, m.tokenizerOrDefault(), layout), blockSize);
        });
    }
}
