package io.flotilla.cluster.launcher;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Tenant-isolated prefix sharing and LoRA adapters of the local cluster ({@code bin/flotilla up
 * [--prefix-sharing global|tenant] [--public-prefix TEXT]... [--api-key KEY]... [--lora NAME[=PATH]]...
 * [--lora-slots N] [--lora-load-ms MS]}); docs/tenancy.md.
 *
 * <p>Every gateway gets each served model's {@code prefix-sharing} and {@code public-prefixes}, the API keys and a
 * salt secret generated once per {@code up} (so every gateway of the cluster salts a tenant alike); every worker gets the
 * adapters: simulated engines serve the names in {@code loraSlots} slots, each load taking {@code loraLoadMs}; vLLM
 * workers load {@code NAME=PATH} adapters on demand. Recorded in the cluster state, so workers started later
 * (start-worker, the planner's local connector) serve the same adapters.
 *
 * @param prefixSharing  {@code global} or {@code tenant}
 * @param publicPrefixes prefixes every tenant shares in tenant mode
 * @param apiKeys        accepted API keys (none: an open API, whose tenants are the requests' {@code user})
 * @param loras          adapter name → path ("" for simulated engines)
 * @param loraSlots      adapters an engine holds at once
 * @param loraLoadMs     simulated load time (vLLM: the advertised one until loads were measured)
 * @param saltSecret     the gateways' HMAC key for tenant salts
 */
public record Tenancy(String prefixSharing, List<String> publicPrefixes, List<String> apiKeys, Map<String, String> loras,
                      int loraSlots, double loraLoadMs, String saltSecret) {

    private static final ObjectMapper JSON = new ObjectMapper();
    public static final Tenancy NONE = new Tenancy("global", List.of(), List.of(), Map.of(), 4, 500, "");

    public Tenancy {
        if (!"global".equals(prefixSharing) && !"tenant".equals(prefixSharing)) {
            throw new LauncherException("--prefix-sharing must be global or tenant, not " + prefixSharing);
        }
        if (loraSlots < 1) {
            throw new LauncherException("--lora-slots must be at least 1, not " + loraSlots);
        }
        if (!(loraLoadMs >= 0) || Double.isInfinite(loraLoadMs)) {
            throw new LauncherException("--lora-load-ms must be a number >= 0");
        }
        publicPrefixes = List.copyOf(publicPrefixes);
        apiKeys = List.copyOf(apiKeys);
        loras = new TreeMap<>(loras);
        saltSecret = saltSecret == null ? "" : saltSecret;
    }

    /**
     * From the command line; a fresh salt secret.
     *
     * @param loraSpecs {@code NAME} (simulated engines) or {@code NAME=PATH} (vLLM loads PATH on demand)
     */
    public static Tenancy parse(String prefixSharing, List<String> publicPrefixes, List<String> apiKeys,
                                List<String> loraSpecs, int loraSlots, double loraLoadMs) {
        Map<String, String> loras = new TreeMap<>();
        for (String spec : loraSpecs == null ? List.<String>of() : loraSpecs) {
            int eq = spec.indexOf('=');
            String name = eq < 0 ? spec : spec.substring(0, eq);
            if (!name.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,127}")) {
                throw new LauncherException("--lora names must be letters, digits and . _ - (at most 128), not '" + name + "'");
            }
            loras.put(name, eq < 0 ? "" : spec.substring(eq + 1));
        }
        byte[] secret = new byte[16];
        new SecureRandom().nextBytes(secret);
        return new Tenancy(prefixSharing == null ? "global" : prefixSharing,
                publicPrefixes == null ? List.of() : publicPrefixes, apiKeys == null ? List.of() : apiKeys, loras,
                loraSlots, loraLoadMs, HexFormat.of().formatHex(secret));
    }

    /**
     * Refuses a prefix-sharing policy given both for every model (these flags) and per model ({@code
     * --gateway-opt models.M.prefix-sharing=…}): two values of one setting, one of them silently lost.
     */
    void checkAgainst(GatewayOptions gateways) {
        boolean everyModel = "tenant".equals(prefixSharing) || !publicPrefixes.isEmpty();
        if (everyModel && gateways.settings().keySet().stream()
                .anyMatch(k -> k.matches("models[.\\[].*(prefix-sharing|public-prefixes).*"))) {
            throw new LauncherException("give the prefix-sharing policy for every model (--prefix-sharing, --public-prefix) "
                    + "or per model (--gateway-opt models.M.prefix-sharing=..., models.M.public-prefixes=...), not both");
        }
    }

    /** The spec with this tenancy's arguments: every gateway's for each of {@code models}, every worker's adapters. */
    ServiceSpec apply(ServiceSpec spec, List<String> models) {
        List<String> extra = new ArrayList<>();
        if (spec.isWorker()) {
            extra.add("--flotilla.worker.lora.max-loaded=" + loraSlots);
            extra.add("--flotilla.worker.lora.load-ms=" + loraLoadMs);
            int i = 0;
            for (Map.Entry<String, String> e : loras.entrySet()) {
                extra.add("--flotilla.worker.lora.adapters[" + i++ + "]=" + e.getKey());
                if (!e.getValue().isEmpty()) {
                    extra.add("--flotilla.worker.lora.paths[" + e.getKey() + "]=" + e.getValue());
                }
            }
        } else if (spec.module().equals("gateway-service")) {
            for (String model : models) {
                if (!"global".equals(prefixSharing)) { // global is the gateway's default: a per-model --gateway-opt may set it
                    extra.add("--flotilla.gateway.models[" + model + "].prefix-sharing=" + prefixSharing);
                }
                for (int i = 0; i < publicPrefixes.size(); i++) {
                    extra.add("--flotilla.gateway.models[" + model + "].public-prefixes[" + i + "]=" + publicPrefixes.get(i));
                }
            }
            for (int i = 0; i < apiKeys.size(); i++) {
                extra.add("--flotilla.gateway.auth.api-keys[" + i + "]=" + apiKeys.get(i));
            }
            if (!saltSecret.isEmpty()) {
                extra.add("--flotilla.gateway.prefix-isolation.salt-secret=" + saltSecret);
            }
        }
        if (extra.isEmpty()) {
            return spec;
        }
        return spec.withExtraArgs(extra);
    }

    void save(ClusterState state) {
        try {
            state.setLayout("tenancy", JSON.writeValueAsString(this));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static Tenancy load(ClusterState state) {
        String json = state.layout("tenancy", "");
        if (json.isEmpty()) {
            return NONE;
        }
        try {
            return JSON.readValue(json, Tenancy.class);
        } catch (JsonProcessingException e) {
            throw new LauncherException("the cluster state's tenancy cannot be read: " + e.getOriginalMessage());
        }
    }
}
