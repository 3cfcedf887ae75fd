package io.flotilla.protocol.hash;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScopedHasherTest {

    private static final BlockHasher BASE = new BlockHasher(KvNamespace.of("m", "cl100k_base", "bf16/bs4/paged"), 4);

    @Test
    void theSharedScopeIsTheBaseNamespace() {
        int[] tokens = tokens(1, 20);
        assertThat(ScopedHasher.shared(BASE).seqHashes(tokens)).isEqualTo(BASE.seqHashes(tokens));
        assertThat(ScopedHasher.of(BASE, new KvScope("", "", 3)).seqHashes(tokens))
                .as("public blocks mean nothing without a salt").isEqualTo(BASE.seqHashes(tokens));
    }

    @Test
    void aSaltWithoutPublicBlocksIsTheSaltedNamespaceFromBlockZero() {
        int[] tokens = tokens(2, 20);
        BlockHasher salted = new BlockHasher(BASE.namespace().withTenantSalt("s1"), 4);
        assertThat(ScopedHasher.of(BASE, new KvScope("", "s1", 0)).seqHashes(tokens)).isEqualTo(salted.seqHashes(tokens));
    }

    @Test
    void publicBlocksAreSharedAndTheChainContinuesInTheSaltedNamespace() {
        int[] tokens = tokens(3, 24); // 6 blocks
        ScopedHasher a = ScopedHasher.of(BASE, new KvScope("", "tenant-a", 2));
        long[] shared = BASE.seqHashes(tokens);
        long[] seq = a.seqHashes(tokens);
        assertThat(Arrays.copyOf(seq, 2)).isEqualTo(Arrays.copyOf(shared, 2));
        BlockHasher salted = new BlockHasher(BASE.namespace().withTenantSalt("tenant-a"), 4);
        for (int b = 2; b < 6; b++) {
            assertThat(seq[b]).isNotEqualTo(shared[b]);
            assertThat(seq[b]).isEqualTo(salted.chain(seq[b - 1], salted.localHash(tokens, b)));
            assertThat(a.localHash(tokens, b)).isEqualTo(salted.localHash(tokens, b));
        }
        assertThat(a.namespaceOf(1).tenantSalt()).isEmpty();
        assertThat(a.namespaceOf(2).tenantSalt()).isEqualTo("tenant-a");
    }

    @Test
    void anAdapterNeverMatchesTheBaseModelNorAnotherAdapter() {
        int[] tokens = tokens(4, 16);
        long[] base = BASE.seqHashes(tokens);
        long[] sql = ScopedHasher.of(BASE, KvScope.lora("sql")).seqHashes(tokens);
        long[] chat = ScopedHasher.of(BASE, KvScope.lora("chat")).seqHashes(tokens);
        for (int b = 0; b < base.length; b++) {
            assertThat(sql[b]).isNotEqualTo(base[b]).isNotEqualTo(chat[b]);
        }
        // the adapter's public prefix is shared among the adapter's tenants, not with the base model
        long[] sqlA = ScopedHasher.of(BASE, new KvScope("sql", "a", 2)).seqHashes(tokens);
        long[] sqlB = ScopedHasher.of(BASE, new KvScope("sql", "b", 2)).seqHashes(tokens);
        assertThat(Arrays.copyOf(sqlA, 2)).isEqualTo(Arrays.copyOf(sql, 2)).isEqualTo(Arrays.copyOf(sqlB, 2));
        assertThat(sqlA[2]).isNotEqualTo(sqlB[2]);
    }

    @Test
    void aBaseHasherWithItsOwnLoraAndSaltIsReplacedByTheScope() {
        BlockHasher odd = new BlockHasher(BASE.namespace().withLoraName("x").withTenantSalt("y"), 4);
        int[] tokens = tokens(5, 12);
        assertThat(ScopedHasher.of(odd, KvScope.SHARED).seqHashes(tokens)).isEqualTo(BASE.seqHashes(tokens));
    }

    @Test
    void scopesRejectNegativePublicBlocks() {
        assertThatThrownBy(() -> new KvScope("", "s", -1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new KvScope(null, null, 5)).isEqualTo(KvScope.SHARED);
    }

    /** Invariant: two tenants' seq hashes agree exactly on the public blocks, and on no block after them. */
    @Property(tries = 200, seed = "20261130")
    void tenantsShareExactlyThePublicBlocks(@ForAll @IntRange(min = 0, max = 12) int blocks,
                                            @ForAll @IntRange(min = 0, max = 14) int publicBlocks,
                                            @ForAll @IntRange(min = 0, max = 3) int partial, @ForAll long seed) {
        int[] tokens = random(seed, blocks * 4 + partial);
        long[] a = ScopedHasher.of(BASE, new KvScope("", "a", publicBlocks)).seqHashes(tokens);
        long[] b = ScopedHasher.of(BASE, new KvScope("", "b", publicBlocks)).seqHashes(tokens);
        long[] aAgain = ScopedHasher.of(BASE, new KvScope("", "a", publicBlocks)).seqHashes(tokens);
        assertThat(a).hasSize(blocks).isEqualTo(aAgain);
        for (int i = 0; i < blocks; i++) {
            if (i < publicBlocks) {
                assertThat(a[i]).isEqualTo(b[i]);
            } else {
                assertThat(a[i]).isNotEqualTo(b[i]);
            }
        }
    }

    private static int[] tokens(int start, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = start * 1000 + i;
        }
        return t;
    }

    private static int[] random(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = r.nextInt(100_000);
        }
        return t;
    }
}
