package io.flotilla.protocol.hash;

import java.util.Objects;

/**
 * The part of a block's identity that varies per request (protocol/README.md "Block identity"): the
 * LoRA adapter its KV was computed with, the tenant it is private to, and how many leading blocks are an
 * allow-listed public prefix that stays shared between tenants.
 *
 * <p>With base namespace {@code B} (model, revision, tokenizer, kv layout):
 * <pre>
 * shared  namespace S = B with lora_name = loraName             (tenant_salt empty)
 * private namespace T = S with tenant_salt = tenantSalt          (T = S when tenantSalt is empty)
 * block i &lt; publicBlocks:  hashed in S, exactly as a request without a salt hashes it
 * block i ≥ publicBlocks:  local[i] = XXH3(seed T, tokens of block i)
 *                          seq[i]   = XXH3(seed T, le64(seq[i−1]) ‖ le64(local[i]))     (seq[0] = local[0])
 * </pre>
 * So a salted request's blocks from {@code publicBlocks} on match no other tenant's, and its first
 * {@code publicBlocks} blocks match every tenant's copy of the same public prefix. A block that holds any
 * token past the public prefix is private: {@code publicBlocks} counts only blocks wholly inside it.
 *
 * @param loraName     adapter name; empty for the base model
 * @param tenantSalt   keyed hash of the tenant; empty when the request's prefixes are shared by all tenants
 * @param publicBlocks leading full blocks hashed without the salt; always 0 without a salt
 */
public record KvScope(String loraName, String tenantSalt, int publicBlocks) {

    /** The base model's KV, shared across tenants. */
    public static final KvScope SHARED = new KvScope("", "", 0);

    public KvScope {
        loraName = Objects.requireNonNullElse(loraName, "");
        tenantSalt = Objects.requireNonNullElse(tenantSalt, "");
        if (publicBlocks < 0) {
            throw new IllegalArgumentException("publicBlocks must not be negative: " + publicBlocks);
        }
        if (tenantSalt.isEmpty()) {
            publicBlocks = 0;
        }
    }

    /** An adapter's KV, shared across tenants. */
    public static KvScope lora(String loraName) {
        return new KvScope(loraName, "", 0);
    }

    public boolean salted() {
        return !tenantSalt.isEmpty();
    }

    public boolean hasLora() {
        return !loraName.isEmpty();
    }

    public KvScope withLora(String lora) {
        return new KvScope(lora, tenantSalt, publicBlocks);
    }

    @Override
    public String toString() {
        return "KvScope[" + (hasLora() ? "lora=" + loraName : "base")
                + (salted() ? ", salted after " + publicBlocks + " public blocks" : ", shared") + "]";
    }
}
