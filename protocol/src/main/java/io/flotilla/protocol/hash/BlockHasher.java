package io.flotilla.protocol.hash;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The one implementation of Flotilla block identity (ARCHITECTURE "Block identity").
 *
 * <pre>
 * namespace_seed = XXH3_64(seed=0, utf8("flotilla-kv/v1\0" model \0 revision \0 tokenizer \0 lora \0 layout \0 salt))
 * local_hash[i]  = XXH3_64(seed=namespace_seed, tokens of block i as little-endian uint32 [‖ sorted le64 content hashes])
 * seq_hash[0]    = local_hash[0]
 * seq_hash[i]    = XXH3_64(seed=namespace_seed, le64(seq_hash[i-1]) ‖ le64(local_hash[i]))
 * </pre>
 *
 * Only full blocks are hashed; a trailing partial block has no identity. Hashes are unsigned 64-bit
 * values carried in a {@code long}. Instances are immutable and thread-safe.
 */
public final class BlockHasher {

    private static final Hasher64 SEED_HASHER = Hashing.xxh3_64();

    private final KvNamespace namespace;
    private final int blockSize;
    private final long namespaceSeed;
    private final Hasher64 hasher;

    public BlockHasher(KvNamespace namespace, int blockSize) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be positive, got " + blockSize);
        }
        this.namespace = namespace;
        this.blockSize = blockSize;
        this.namespaceSeed = namespaceSeed(namespace);
        this.hasher = Hashing.xxh3_64(namespaceSeed);
    }

    /** The seed every block hash of this namespace is computed with. */
    public static long namespaceSeed(KvNamespace namespace) {
        return SEED_HASHER.hashBytesToLong(namespace.canonical().getBytes(StandardCharsets.UTF_8));
    }

    public KvNamespace namespace() {
        return namespace;
    }

    public int blockSize() {
        return blockSize;
    }

    public long namespaceSeed() {
        return namespaceSeed;
    }

    /** Number of full blocks in a prompt of {@code tokenCount} tokens. */
    public int fullBlocks(int tokenCount) {
        return tokenCount / blockSize;
    }

    /** Local hash of block {@code block} of {@code tokens} (which must contain that whole block). */
    public long localHash(int[] tokens, int block) {
        return localHash(tokens, block, null);
    }

    /**
     * Local hash of one block with multimodal content: the content hashes of the items placed in
     * the block are appended in ascending unsigned order, so their order in the request does not matter.
     */
    public long localHash(int[] tokens, int block, long[] contentHashes) {
        int from = block * blockSize;
        if (block < 0 || from + blockSize > tokens.length) {
            throw new IllegalArgumentException("block " + block + " is not a full block of " + tokens.length + " tokens");
        }
        int extra = contentHashes == null ? 0 : contentHashes.length;
        byte[] buf = new byte[blockSize * 4 + extra * 8];
        for (int i = 0; i < blockSize; i++) {
            putLe32(buf, i * 4, tokens[from + i]);
        }
        if (extra > 0) {
            long[] sorted = contentHashes.clone();
            sortUnsigned(sorted);
            for (int i = 0; i < extra; i++) {
                putLe64(buf, blockSize * 4 + i * 8, sorted[i]);
            }
        }
        return hasher.hashBytesToLong(buf);
    }

    /** seq_hash of a block given its parent's seq_hash and its own local hash. */
    public long chain(long parentSeqHash, long localHash) {
        byte[] buf = new byte[16];
        putLe64(buf, 0, parentSeqHash);
        putLe64(buf, 8, localHash);
        return hasher.hashBytesToLong(buf);
    }

    /** Local hashes of every full block of {@code tokens}. */
    public long[] localHashes(int[] tokens) {
        int n = fullBlocks(tokens.length);
        long[] out = new long[n];
        byte[] buf = new byte[blockSize * 4];
        for (int b = 0; b < n; b++) {
            int from = b * blockSize;
            for (int i = 0; i < blockSize; i++) {
                putLe32(buf, i * 4, tokens[from + i]);
            }
            out[b] = hasher.hashBytesToLong(buf);
        }
        return out;
    }

    /** Sequence hashes of every full block of {@code tokens}; element i identifies blocks 0..i. */
    public long[] seqHashes(int[] tokens) {
        return seqHashesFromLocal(localHashes(tokens));
    }

    /**
     * Sequence hashes of every full block of {@code tokens}, given those of its first {@code known.length}
     * blocks: the result starts with {@code known} and only the blocks after it are hashed.
     */
    public long[] seqHashes(int[] tokens, long[] known) {
        int n = fullBlocks(tokens.length);
        if (known.length > n) {
            throw new IllegalArgumentException(known.length + " known hashes for " + n + " full blocks");
        }
        long[] seq = Arrays.copyOf(known, n);
        byte[] block = new byte[blockSize * 4];
        byte[] pair = new byte[16];
        for (int b = known.length; b < n; b++) {
            int from = b * blockSize;
            for (int i = 0; i < blockSize; i++) {
                putLe32(block, i * 4, tokens[from + i]);
            }
            long local = hasher.hashBytesToLong(block);
            if (b == 0) {
                seq[0] = local;
            } else {
                putLe64(pair, 0, seq[b - 1]);
                putLe64(pair, 8, local);
                seq[b] = hasher.hashBytesToLong(pair);
            }
        }
        return seq;
    }

    /** Chains local hashes into sequence hashes. */
    public long[] seqHashesFromLocal(long[] local) {
        long[] seq = new long[local.length];
        byte[] buf = new byte[16];
        for (int i = 0; i < local.length; i++) {
            if (i == 0) {
                seq[0] = local[0];
            } else {
                putLe64(buf, 0, seq[i - 1]);
                putLe64(buf, 8, local[i]);
                seq[i] = hasher.hashBytesToLong(buf);
            }
        }
        return seq;
    }

    /** Formats a hash the way logs, JSON and test vectors show it: 16 lower-case hex digits. */
    public static String hex(long hash) {
        String s = Long.toHexString(hash);
        return "0".repeat(16 - s.length()) + s;
    }

    private static void putLe32(byte[] buf, int at, int v) {
        buf[at] = (byte) v;
        buf[at + 1] = (byte) (v >>> 8);
        buf[at + 2] = (byte) (v >>> 16);
        buf[at + 3] = (byte) (v >>> 24);
    }

    private static void putLe64(byte[] buf, int at, long v) {
        for (int i = 0; i < 8; i++) {
            buf[at + i] = (byte) (v >>> (8 * i));
        }
    }

    private static void sortUnsigned(long[] values) {
        for (int i = 0; i < values.length; i++) {
            values[i] ^= Long.MIN_VALUE;
        }
        Arrays.sort(values);
        for (int i = 0; i < values.length; i++) {
            values[i] ^= Long.MIN_VALUE;
        }
    }
}
