package io.flotilla.gateway.generation;

/** Whether a model's cached prefixes are shared by every tenant or private to each. */
public enum PrefixSharing {
    /** Every tenant's requests match every cached prefix (the most cache hits). */
    GLOBAL,
    /**
     * Each tenant's blocks are hashed with its own salt, so no tenant's cache hit, TTFT or
     * {@code cached_tokens} reveals another tenant's prompt; only {@code public-prefixes} stay shared.
     */
    TENANT
}
