package io.flotilla.gateway.generation;

import io.flotilla.gateway.flow.FlowLimits;

import java.util.List;
import java.util.Map;

/**
 * What the generation path reads of the gateway's configuration, every default already applied: the
 * configuration builds it from its properties, so nothing in this package reads them.
 *
 * @param models              each configured model's settings by name
 * @param defaults            the settings of a model that is not configured
 * @param promptCacheEnabled  keep rendered chat histories for reuse ({@code tokenize.ChatPromptCache})
 * @param promptCacheMaxBytes the prompt cache's size limit
 * @param saltSecret          the HMAC key that turns a tenant into its prefix salt; empty: a built-in key
 * @param keySharing          per API key id: its prefix sharing, whatever its models say
 */
public record GenerationSettings(Map<String, Model> models, Model defaults, boolean promptCacheEnabled,
                                 long promptCacheMaxBytes, String saltSecret, Map<String, PrefixSharing> keySharing) {

    public GenerationSettings {
        models = Map.copyOf(models);
        keySharing = Map.copyOf(keySharing);
    }

    /** The settings of {@code model}: its own, or the defaults. */
    public Model model(String model) {
        return models.getOrDefault(model, defaults);
    }

    /**
     * One model's settings.
     *
     * @param toolParser      the tool-call parser's name, {@code none}, or null for the template's own default
     * @param reasoningParser the reasoning parser's name, or null / {@code none} for none
     * @param maxContext      longest prompt plus output in tokens
     * @param allowDisagg     whether the router may pick a separate prefill worker
     * @param flowLimits      the model's flow-control limits
     * @param kvLayout        KV layout of the block-hash namespace; null or blank: {@code bf16/bs<block size>/paged}
     * @param prefixSharing   whether tenants share cached prefixes
     * @param publicPrefixes  in {@link PrefixSharing#TENANT} mode, prompt prefixes every tenant may share
     */
    public record Model(String toolParser, String reasoningParser, int maxContext, boolean allowDisagg,
                        FlowLimits flowLimits, String kvLayout, PrefixSharing prefixSharing, List<String> publicPrefixes) {

        public Model {
            publicPrefixes = List.copyOf(publicPrefixes);
        }
    }
}
