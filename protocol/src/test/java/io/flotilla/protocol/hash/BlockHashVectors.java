package io.flotilla.protocol.hash;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Writes {@code block-hash-vectors.json}. Run only to (re)create the file after a deliberate,
 * versioned change of the identity scheme; the test {@link BlockHasherTest} checks the committed file.
 * Usage: {@code java -cp … io.flotilla.protocol.hash.BlockHashVectors protocol/src/test/resources/block-hash-vectors.json}
 */
public final class BlockHashVectors {

    /** @param publicBlocks leading blocks hashed without {@code ns}'s tenant salt (an allow-listed public prefix) */
    record Case(String name, KvNamespace ns, int blockSize, int[] tokens, int publicBlocks) {
        Case(String name, KvNamespace ns, int blockSize, int[] tokens) {
            this(name, ns, blockSize, tokens, 0);
        }

        ScopedHasher hasher() {
            BlockHasher base = new BlockHasher(ns.withLoraName("").withTenantSalt(""), blockSize);
            return ScopedHasher.of(base, new KvScope(ns.loraName(), ns.tenantSalt(), publicBlocks));
        }
    }

    /** A tenant salt in the form gateways send ({@code TenantSalts}: "fs1:" and 32 hex digits of an HMAC). */
    static final String GATEWAY_SALT = "fs1:9f86d081884c7d659a2feaa0c55ad015";

    static List<Case> cases() {
        List<Case> cases = new ArrayList<>();
        KvNamespace base = KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged");
        cases.add(new Case("empty-prompt", base, 16, new int[0]));
        cases.add(new Case("partial-block-only", base, 16, seq(0, 15)));
        cases.add(new Case("one-block", base, 16, seq(0, 16)));
        cases.add(new Case("two-blocks-and-partial", base, 16, seq(100, 40)));
        cases.add(new Case("large-token-ids", base, 16, fill(16, 0x7fffffff)));
        cases.add(new Case("random-8-blocks", base, 16, random(42, 128, 200_000)));
        cases.add(new Case("other-model", KvNamespace.of("llama-3-8b", "hf:meta-llama/Meta-Llama-3-8B", "bf16/bs16/paged"), 16, seq(0, 32)));
        cases.add(new Case("tenant-salt", base.withTenantSalt("tenant-a"), 16, seq(0, 32)));
        cases.add(new Case("lora-and-revision", new KvNamespace("flotilla-sim", "rev-2", "cl100k_base", "sql-lora", "fp8/bs32/paged", ""), 32, random(7, 96, 100_000)));
        cases.add(new Case("unicode-model-name", KvNamespace.of("modèle-ñ", "cl100k_base", "bf16/bs4/paged"), 4, seq(1, 9)));
        // the namespaces gateways and workers build for tenants and adapters
        cases.add(new Case("gateway-tenant-salt", base.withTenantSalt(GATEWAY_SALT), 16, seq(0, 48)));
        cases.add(new Case("lora-adapter", base.withLoraName("sql-lora"), 16, seq(0, 48)));
        cases.add(new Case("lora-adapter-tenant-salt", base.withLoraName("sql-lora").withTenantSalt(GATEWAY_SALT), 16,
                seq(0, 48)));
        cases.add(new Case("salted-after-2-public-blocks", base.withTenantSalt(GATEWAY_SALT), 16, seq(0, 72), 2));
        cases.add(new Case("lora-salted-after-1-public-block", base.withLoraName("sql-lora").withTenantSalt(GATEWAY_SALT),
                16, random(11, 64, 100_000), 1));
        return cases;
    }

    static Map<String, Object> expected(Case c) {
        BlockHasher h = new BlockHasher(c.ns(), c.blockSize());
        ScopedHasher scoped = c.hasher();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", c.name());
        Map<String, Object> ns = new LinkedHashMap<>();
        ns.put("model", c.ns().model());
        ns.put("revision", c.ns().revision());
        ns.put("tokenizer_id", c.ns().tokenizerId());
        ns.put("lora_name", c.ns().loraName());
        ns.put("kv_layout", c.ns().kvLayout());
        ns.put("tenant_salt", c.ns().tenantSalt());
        m.put("namespace", ns);
        if (c.publicBlocks() > 0) {
            m.put("public_blocks", c.publicBlocks());
        }
        m.put("block_size", c.blockSize());
        m.put("tokens", c.tokens());
        m.put("namespace_seed", BlockHasher.hex(h.namespaceSeed()));
        if (c.publicBlocks() > 0) {
            m.put("public_namespace_seed", BlockHasher.hex(BlockHasher.namespaceSeed(c.ns().withTenantSalt(""))));
        }
        m.put("local_hashes", hexAll(scoped.localHashes(c.tokens())));
        m.put("seq_hashes", hexAll(scoped.seqHashes(c.tokens())));
        return m;
    }

    public static void main(String[] args) throws Exception {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Case c : cases()) {
            out.add(expected(c));
        }
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("scheme", "flotilla-kv/v1");
        root.put("hash", "XXH3_64, unsigned, shown as 16 lower-case hex digits");
        root.put("public_blocks", "when present: blocks below it are hashed in the namespace without its tenant_salt "
                + "(public_namespace_seed), the others in the namespace shown; the seq hashes chain across the boundary");
        root.put("vectors", out);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(Path.of(args[0]).toFile(), root);
    }

    static List<String> hexAll(long[] hashes) {
        List<String> out = new ArrayList<>();
        for (long h : hashes) {
            out.add(BlockHasher.hex(h));
        }
        return out;
    }

    private static int[] seq(int start, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = start + i;
        }
        return t;
    }

    private static int[] fill(int n, int v) {
        int[] t = new int[n];
        java.util.Arrays.fill(t, v);
        return t;
    }

    private static int[] random(long seed, int n, int vocab) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = r.nextInt(vocab);
        }
        return t;
    }
}
