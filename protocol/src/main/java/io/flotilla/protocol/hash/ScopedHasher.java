package io.flotilla.protocol.hash;

/**
 * Block identity of requests in one {@link KvScope}: the {@link BlockHasher} of the shared namespace for
 * the leading public blocks and the one of the tenant's private namespace for the rest, chained into one
 * sequence (the formula is {@link KvScope}'s). Immutable and thread-safe.
 */
public final class ScopedHasher {

    private final KvScope scope;
    private final BlockHasher shared;
    private final BlockHasher salted;

    private ScopedHasher(KvScope scope, BlockHasher shared, BlockHasher salted) {
        this.scope = scope;
        this.shared = shared;
        this.salted = salted;
    }

    /**
     * The hasher of {@code scope} within {@code base}'s namespace; {@code base}'s own LoRA name and salt are
     * replaced by the scope's. A scope equal to {@code base}'s namespace reuses {@code base}.
     */
    public static ScopedHasher of(BlockHasher base, KvScope scope) {
        KvNamespace ns = base.namespace();
        BlockHasher shared = ns.loraName().equals(scope.loraName()) && ns.tenantSalt().isEmpty() ? base
                : new BlockHasher(ns.withLoraName(scope.loraName()).withTenantSalt(""), base.blockSize());
        BlockHasher salted = scope.salted()
                ? new BlockHasher(shared.namespace().withTenantSalt(scope.tenantSalt()), base.blockSize()) : shared;
        return new ScopedHasher(scope, shared, salted);
    }

    /** The base model's shared identity: {@code base} as it is. */
    public static ScopedHasher shared(BlockHasher base) {
        return of(base, KvScope.SHARED);
    }

    public KvScope scope() {
        return scope;
    }

    public int blockSize() {
        return shared.blockSize();
    }

    /** The namespace block {@code block} is hashed in. */
    public KvNamespace namespaceOf(int block) {
        return hasherOf(block).namespace();
    }

    /** Local hash of full block {@code block} of {@code tokens}. */
    public long localHash(int[] tokens, int block) {
        return hasherOf(block).localHash(tokens, block);
    }

    /** seq_hash of block {@code block} from its parent's seq_hash (ignored for block 0) and its local hash. */
    public long seqHash(long parentSeqHash, long localHash, int block) {
        return block == 0 ? localHash : hasherOf(block).chain(parentSeqHash, localHash);
    }

    /** Local hashes of every full block of {@code tokens}. */
    public long[] localHashes(int[] tokens) {
        int n = shared.fullBlocks(tokens.length);
        long[] out = new long[n];
        for (int b = 0; b < n; b++) {
            out[b] = localHash(tokens, b);
        }
        return out;
    }

    /** Sequence hashes of every full block of {@code tokens}; element i identifies blocks 0..i in this scope. */
    public long[] seqHashes(int[] tokens) {
        if (salted == shared) {
            return shared.seqHashes(tokens);
        }
        long[] local = localHashes(tokens);
        long[] seq = new long[local.length];
        for (int b = 0; b < local.length; b++) {
            seq[b] = seqHash(b == 0 ? 0 : seq[b - 1], local[b], b);
        }
        return seq;
    }

    /**
     * Sequence hashes of every full block of {@code tokens} given those of its first {@code known.length}
     * blocks in this scope (which the result starts with); equal to {@link #seqHashes(int[])}.
     */
    public long[] seqHashes(int[] tokens, long[] known) {
        if (salted == shared) {
            return shared.seqHashes(tokens, known);
        }
        int n = shared.fullBlocks(tokens.length);
        if (known.length > n) {
            throw new IllegalArgumentException(known.length + " known hashes for " + n + " full blocks");
        }
        long[] seq = java.util.Arrays.copyOf(known, n);
        for (int b = known.length; b < n; b++) {
            seq[b] = seqHash(b == 0 ? 0 : seq[b - 1], localHash(tokens, b), b);
        }
        return seq;
    }

    /** Equal for two hashers exactly when they give equal tokens equal sequence hashes. */
    public Object identity() {
        return java.util.List.of(shared.namespace().canonical(), salted.namespace().canonical(), scope.publicBlocks(),
                shared.blockSize());
    }

    private BlockHasher hasherOf(int block) {
        return block < scope.publicBlocks() ? shared : salted;
    }

    @Override
    public String toString() {
        return "ScopedHasher[" + shared.namespace().model() + ", " + scope + "]";
    }
}
