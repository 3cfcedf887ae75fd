package io.flotilla.protocol.hash;

import com.dynatrace.hash4j.hashing.Hashing;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BlockHasherTest {

    private static final KvNamespace NS = KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged");

    @Test
    void hash4jIsStandardXxh3() {
        // Reference values from the xxHash specification's test suite (XXH3_64bits, empty input).
        assertThat(Hashing.xxh3_64().hashBytesToLong(new byte[0])).isEqualTo(0x2D06800538D394C2L);
        assertThat(Hashing.xxh3_64(0).hashBytesToLong(new byte[0])).isEqualTo(0x2D06800538D394C2L);
    }

    @Test
    void committedVectorsMatch() throws Exception {
        JsonNode root;
        try (InputStream in = getClass().getResourceAsStream("/block-hash-vectors.json")) {
            assertThat(in).as("block-hash-vectors.json on the test classpath").isNotNull();
            root = new ObjectMapper().readTree(in);
        }
        JsonNode vectors = root.get("vectors");
        assertThat(vectors.size()).isEqualTo(BlockHashVectors.cases().size());
        for (JsonNode v : vectors) {
            JsonNode n = v.get("namespace");
            KvNamespace ns = new KvNamespace(n.get("model").asText(), n.get("revision").asText(),
                    n.get("tokenizer_id").asText(), n.get("lora_name").asText(), n.get("kv_layout").asText(),
                    n.get("tenant_salt").asText());
            int[] tokens = new int[v.get("tokens").size()];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = (int) v.get("tokens").get(i).asLong();
            }
            BlockHasher h = new BlockHasher(ns, v.get("block_size").asInt());
            String name = v.get("name").asText();
            int publicBlocks = v.path("public_blocks").asInt(0);
            ScopedHasher scoped = ScopedHasher.of(new BlockHasher(ns.withLoraName("").withTenantSalt(""), h.blockSize()),
                    new KvScope(ns.loraName(), ns.tenantSalt(), publicBlocks));
            assertThat(BlockHasher.hex(h.namespaceSeed())).as(name + " namespace seed").isEqualTo(v.get("namespace_seed").asText());
            assertThat(BlockHashVectors.hexAll(scoped.localHashes(tokens))).as(name + " local").isEqualTo(texts(v.get("local_hashes")));
            assertThat(BlockHashVectors.hexAll(scoped.seqHashes(tokens))).as(name + " seq").isEqualTo(texts(v.get("seq_hashes")));
            if (publicBlocks == 0) { // an unsplit scope is exactly the namespace's own hasher
                assertThat(BlockHashVectors.hexAll(h.seqHashes(tokens))).as(name + " seq").isEqualTo(texts(v.get("seq_hashes")));
            }
        }
    }

    @Test
    void onlyFullBlocksAreHashed() {
        BlockHasher h = new BlockHasher(NS, 16);
        assertThat(h.seqHashes(new int[15])).isEmpty();
        assertThat(h.seqHashes(new int[16])).hasSize(1);
        assertThat(h.seqHashes(new int[47])).hasSize(2);
    }

    @Test
    void seqHashChainsLocalHashes() {
        BlockHasher h = new BlockHasher(NS, 4);
        int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        long[] local = h.localHashes(tokens);
        long[] seq = h.seqHashes(tokens);
        assertThat(seq[0]).isEqualTo(local[0]);
        assertThat(seq[1]).isEqualTo(h.chain(seq[0], local[1]));
        assertThat(seq[2]).isEqualTo(h.chain(seq[1], local[2]));
        assertThat(h.localHash(tokens, 2)).isEqualTo(local[2]);
    }

    @Test
    void sameBlockUnderDifferentPrefixHasDifferentSeqHash() {
        BlockHasher h = new BlockHasher(NS, 4);
        long[] a = h.seqHashes(new int[]{1, 1, 1, 1, 9, 9, 9, 9});
        long[] b = h.seqHashes(new int[]{2, 2, 2, 2, 9, 9, 9, 9});
        assertThat(h.localHashes(new int[]{1, 1, 1, 1, 9, 9, 9, 9})[1]).isEqualTo(h.localHashes(new int[]{2, 2, 2, 2, 9, 9, 9, 9})[1]);
        assertThat(a[1]).isNotEqualTo(b[1]);
    }

    @Test
    void everyNamespaceFieldSeparatesIdentity() {
        int[] tokens = new int[16];
        List<KvNamespace> variants = List.of(NS,
                new KvNamespace("other", "", "cl100k_base", "", "bf16/bs16/paged", ""),
                new KvNamespace("flotilla-sim", "r2", "cl100k_base", "", "bf16/bs16/paged", ""),
                new KvNamespace("flotilla-sim", "", "o200k_base", "", "bf16/bs16/paged", ""),
                new KvNamespace("flotilla-sim", "", "cl100k_base", "lora", "bf16/bs16/paged", ""),
                new KvNamespace("flotilla-sim", "", "cl100k_base", "", "fp8/bs16/paged", ""),
                NS.withTenantSalt("t1"),
                // field boundaries matter: moving a character from one field to the next changes the seed
                new KvNamespace("flotilla-si", "m", "cl100k_base", "", "bf16/bs16/paged", ""));
        List<Long> seeds = new ArrayList<>();
        for (KvNamespace ns : variants) {
            seeds.add(new BlockHasher(ns, 16).seqHashes(tokens)[0]);
        }
        assertThat(seeds).doesNotHaveDuplicates();
    }

    @Test
    void multimodalContentHashesAreOrderIndependentAndChangeIdentity() {
        BlockHasher h = new BlockHasher(NS, 4);
        int[] tokens = {5, 5, 5, 5};
        long plain = h.localHash(tokens, 0);
        long ab = h.localHash(tokens, 0, new long[]{-1L, 7L});
        long ba = h.localHash(tokens, 0, new long[]{7L, -1L});
        assertThat(ab).isEqualTo(ba).isNotEqualTo(plain);
        assertThat(h.localHash(tokens, 0, new long[0])).isEqualTo(plain);
    }

    @Test
    void rejectsBadArguments() {
        assertThatThrownBy(() -> new BlockHasher(NS, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new BlockHasher(NS, 4).localHash(new int[5], 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KvNamespace.of("", "t", "l")).isInstanceOf(IllegalArgumentException.class);
    }

    @Property(tries = 200, seed = "20261129")
    void sharedTokenPrefixGivesSharedSeqHashPrefix(@ForAll @Size(min = 0, max = 80) List<@IntRange(min = 0, max = 100_000) Integer> prefix,
                                                   @ForAll @Size(min = 1, max = 40) List<@IntRange(min = 0, max = 100_000) Integer> tailA,
                                                   @ForAll @Size(min = 1, max = 40) List<@IntRange(min = 0, max = 100_000) Integer> tailB) {
        BlockHasher h = new BlockHasher(NS, 8);
        int[] a = concat(prefix, tailA);
        int[] b = concat(prefix, tailB);
        long[] ha = h.seqHashes(a);
        long[] hb = h.seqHashes(b);
        int sharedBlocks = prefix.size() / 8;
        assertThat(Arrays.copyOf(ha, sharedBlocks)).isEqualTo(Arrays.copyOf(hb, sharedBlocks));
        int firstDiff = firstDifference(a, b);
        // a block that contains a differing token, and every block after it, differs
        for (int i = firstDiff / 8; i < Math.min(ha.length, hb.length); i++) {
            assertThat(ha[i]).isNotEqualTo(hb[i]);
        }
    }

    private static int[] concat(List<Integer> a, List<Integer> b) {
        int[] out = new int[a.size() + b.size()];
        int i = 0;
        for (int v : a) out[i++] = v;
        for (int v : b) out[i++] = v;
        return out;
    }

    private static int firstDifference(int[] a, int[] b) {
        int n = Math.min(a.length, b.length);
        for (int i = 0; i < n; i++) {
            if (a[i] != b[i]) return i;
        }
        return n;
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }
}
