package io.flotilla.protocol.hash;

import java.util.Objects;

/**
 * Everything that must be equal for two workers' KV blocks to be interchangeable. Two requests
 * whose namespaces differ never share a block identity, even for equal token ids.
 *
 * @param model       served model name
 * @param revision    model revision (weights version); empty when unversioned
 * @param tokenizerId tokenizer identity, e.g. {@code cl100k_base} or a tokenizer.json digest
 * @param loraName    LoRA adapter name; empty for the base model
 * @param kvLayout    dtype, block size and attention layout, e.g. {@code bf16/bs16/paged}
 * @param tenantSalt  empty unless cross-tenant cache sharing is disabled for the model
 */
public record KvNamespace(String model, String revision, String tokenizerId, String loraName,
                          String kvLayout, String tenantSalt) {

    public KvNamespace {
        Objects.requireNonNull(model, "model");
        revision = Objects.requireNonNullElse(revision, "");
        tokenizerId = Objects.requireNonNullElse(tokenizerId, "");
        loraName = Objects.requireNonNullElse(loraName, "");
        kvLayout = Objects.requireNonNullElse(kvLayout, "");
        tenantSalt = Objects.requireNonNullElse(tenantSalt, "");
        if (model.isEmpty()) {
            throw new IllegalArgumentException("model must not be empty");
        }
    }

    /** The namespace of a base model with a given tokenizer and KV layout, shared across tenants. */
    public static KvNamespace of(String model, String tokenizerId, String kvLayout) {
        return new KvNamespace(model, "", tokenizerId, "", kvLayout, "");
    }

    /** The same namespace with a tenant salt (cross-tenant sharing disabled). */
    public KvNamespace withTenantSalt(String salt) {
        return new KvNamespace(model, revision, tokenizerId, loraName, kvLayout, salt);
    }

    /** The same namespace for a LoRA adapter's KV ({@code ""}: the base model's). */
    public KvNamespace withLoraName(String lora) {
        return new KvNamespace(model, revision, tokenizerId, lora, kvLayout, tenantSalt);
    }

    /** The canonical byte string the namespace seed is hashed from (before UTF-8 encoding). */
    String canonical() {
        return "flotilla-kv/v1\0" + model + "\0" + revision + "\0" + tokenizerId + "\0" + loraName + "\0"
                + kvLayout + "\0" + tenantSalt;
    }

    /** The default KV layout string for a dtype and block size with paged attention. */
    public static String pagedLayout(String dtype, int blockSize) {
        return dtype + "/bs" + blockSize + "/paged";
    }
}
