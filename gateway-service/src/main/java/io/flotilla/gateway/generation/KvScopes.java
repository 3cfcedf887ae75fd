package io.flotilla.gateway.generation;

import io.flotilla.gateway.tokenize.ChatMessage;
import io.flotilla.gateway.tokenize.ModelTokenization;
import io.flotilla.protocol.hash.KvScope;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The {@link KvScope} of each request (docs/tenancy.md): its LoRA
 * adapter, and in {@code tenant} prefix sharing its tenant's salt and how many leading blocks are public.
 *
 * <pre>
 * sharing  = prefix-isolation.keys[key id] if set, else models.&lt;m&gt;.prefix-sharing (global)
 * salt     = "fs1:" ‖ hex(HMAC-SHA256(salt-secret, model ‖ 0x00 ‖ tenant))[0, 32)     (tenant mode only)
 * public   = max over the model's public prefixes p, each as its text tokens and as the tokens of a chat
 *            holding only the system message p, of ⌊LCP(prompt, p) / blockSize⌋; 0 when a worker of the model
 *            salts every block (vLLM), so that the gateway's hashes are that worker's
 * </pre>
 * The tenant is the API key id when the request came with a key (a key's {@code user}s are one customer,
 * and a client cannot pick another key's scope by naming its user); on an open API it is the request's
 * {@code user} or {@code anonymous}, which isolates honest clients from each other but is no security
 * boundary. Counting only blocks inside the longest common prefix with a public prefix means a public
 * block holds nothing but public tokens, whatever the rest of the prompt is. Thread-safe.
 */
public final class KvScopes {

    /** Built-in HMAC key when none is configured: salts are then a function of public tenant ids. */
    private static final String BUILT_IN_SECRET = "flotilla-prefix-isolation/v1";

    private final GenerationSettings settings;
    private final Function<String, ModelTokenization> tokenizations;
    private final SecretKeySpec key;
    private final Map<String, List<int[]>> publicTokens = new ConcurrentHashMap<>();

    public KvScopes(GenerationSettings settings, Function<String, ModelTokenization> tokenizations) {
        this.settings = settings;
        this.tokenizations = tokenizations;
        String secret = settings.saltSecret();
        this.key = new SecretKeySpec((secret.isEmpty() ? BUILT_IN_SECRET : secret).getBytes(StandardCharsets.UTF_8),
                "HmacSHA256");
    }

    /** Whether {@code keyId}'s requests for {@code model} keep their prefixes to their tenant. */
    public PrefixSharing sharing(String model, String keyId) {
        PrefixSharing override = keyId.isEmpty() ? null : settings.keySharing().get(keyId);
        return override != null ? override : settings.model(model).prefixSharing();
    }

    /**
     * @param keyId  the API key id the request authenticated with, "" on an open API
     * @param tenant the request's tenant ({@code user} or the key id)
     * @param lora   the adapter the request runs on, "" for the base model
     * @param publicPrefixes whether the model's workers keep public prefixes shared ({@link
     *               io.flotilla.gateway.client.ServedModel#publicPrefixes()}); without, every block is salted
     */
    public KvScope scope(String model, String keyId, String tenant, String lora, int[] prompt, int blockSize,
                         boolean publicPrefixes) {
        if (sharing(model, keyId) == PrefixSharing.GLOBAL) {
            return KvScope.lora(lora);
        }
        String isolated = keyId.isEmpty() ? tenant : keyId;
        return new KvScope(lora, salt(model, isolated), publicPrefixes ? publicBlocks(model, prompt, blockSize) : 0);
    }

    String salt(String model, String tenant) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            byte[] d = mac.doFinal((model + "\0" + tenant).getBytes(StandardCharsets.UTF_8));
            return "fs1:" + HexFormat.of().formatHex(d, 0, 16);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JRE", e);
        }
    }

    int publicBlocks(String model, int[] prompt, int blockSize) {
        int best = 0;
        for (int[] p : publicTokens.computeIfAbsent(model, this::tokenizePublicPrefixes)) {
            int n = Math.min(p.length, prompt.length);
            int common = 0;
            while (common < n && p[common] == prompt[common]) {
                common++;
            }
            best = Math.max(best, common / blockSize);
        }
        return best;
    }

    private List<int[]> tokenizePublicPrefixes(String model) {
        List<int[]> out = new ArrayList<>();
        ModelTokenization t = tokenizations.apply(model);
        for (String p : settings.model(model).publicPrefixes()) {
            out.add(t.textPrompt(p));
            out.add(t.chatPrompt(List.of(new ChatMessage("system", null, p))));
        }
        return List.copyOf(out);
    }
}
