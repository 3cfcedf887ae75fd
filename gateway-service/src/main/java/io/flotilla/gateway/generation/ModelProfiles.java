package io.flotilla.gateway.generation;

import io.flotilla.gateway.config.GatewayProperties;
import io.flotilla.gateway.flow.FlowLimits;
import io.flotilla.gateway.tokenize.ModelTokenization;
import io.flotilla.gateway.tokenize.ModelTokenizations;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-model settings resolved against what is built in: tokenizer, chat template, context limit,
 * flow-control limits and block identity. Tokenizers and templates are resolved at start-up by
 * {@link ModelTokenizations}, so a typo or a broken model directory fails startup instead of requests.
 */
public final class ModelProfiles {

    private final GatewayProperties properties;
    private final ModelTokenizations tokenizations;
    private final Map<String, BlockHasher> hashers = new ConcurrentHashMap<>();

    public ModelProfiles(GatewayProperties properties, ModelTokenizations tokenizations) {
        this.properties = properties;
        this.tokenizations = tokenizations;
    }

    public ModelTokenization tokenization(String model) {
        return tokenizations.of(model);
    }

    public int maxContext(String model) {
        return properties.model(model).maxContextOrDefault();
    }

    public boolean allowDisagg(String model) {
        return properties.model(model).allowDisaggOrDefault();
    }

    public FlowLimits flowLimits(String model) {
        GatewayProperties.Model m = properties.model(model);
        GatewayProperties.Flow f = properties.flow();
        return new FlowLimits(
                m.maxInFlight() != null ? m.maxInFlight() : f.maxInFlight(),
                m.maxQueued() != null ? m.maxQueued() : f.maxQueued(),
                f.maxRouting(),
                m.queueTimeout() != null ? m.queueTimeout() : f.queueTimeout());
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
            return new BlockHasher(KvNamespace.of(model, tokenization(model).tokenizer().id(), layout), blockSize);
        });
    }
}
