package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.hash.ScopedHasher;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.StoredBlock;
import io.flotilla.worker.engine.EngineRequest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.flotilla.worker.engine.sim.SimTesting.prompt;
import static io.flotilla.worker.engine.sim.SimTesting.request;
import static io.flotilla.worker.engine.sim.SimTesting.runUntilIdle;
import static org.assertj.core.api.Assertions.assertThat;

/** The simulated engine keeps tenants' and adapters' KV apart exactly as {@link KvScope} says. */
class CacheScopeSchedulerTest {

    private static final KvScope TENANT_A = new KvScope("", "fs1:aaaa", 0);
    private static final KvScope TENANT_B = new KvScope("", "fs1:bbbb", 0);

    private final KvEventReplay replay = new KvEventReplay();
    private final SimEngineConfig config = SimTesting.small().adapters(new SimAdapters(List.of("sql"), 2, 0)).build();
    private final Scheduler s = new Scheduler(config, replay);

    private int cachedTokensOf(String id, int[] prompt, KvScope scope) {
        RecordingSink sink = new RecordingSink();
        s.submit(request(id, prompt, 2).withScope(scope), sink);
        runUntilIdle(s, 50);
        assertThat(sink.error).isNull();
        return sink.cachedTokens;
    }

    @Test
    void anotherTenantsPromptIsColdAndEachTenantsOwnRepeatHits() {
        int[] p = prompt(21, 1); // five full blocks of 4 and one token
        assertThat(cachedTokensOf("a1", p, TENANT_A)).isZero();
        assertThat(cachedTokensOf("b1", p, TENANT_B)).as("B after A: cold").isZero();
        assertThat(cachedTokensOf("shared", p, KvScope.SHARED)).as("an unsalted request after both: cold").isZero();
        assertThat(cachedTokensOf("a2", p, TENANT_A)).isEqualTo(20);
        assertThat(cachedTokensOf("b2", p, TENANT_B)).isEqualTo(20);
        s.pool().verifyInvariants();
        assertThat(replay.violations).isEmpty();
    }

    @Test
    void aPublicPrefixStaysSharedAndTheRestIsPrivate() {
        int[] p = prompt(21, 2);
        KvScope a = new KvScope("", "fs1:aaaa", 2);
        KvScope b = new KvScope("", "fs1:bbbb", 2);
        assertThat(cachedTokensOf("a1", p, a)).isZero();
        assertThat(cachedTokensOf("b1", p, b)).as("only the two public blocks are B's to reuse").isEqualTo(8);
        assertThat(cachedTokensOf("shared", p, KvScope.SHARED)).as("an unsalted request shares the public blocks")
                .isEqualTo(8);
    }

    @Test
    void theEventsCarryTheScopesSeqHashes() {
        int[] p = prompt(12, 3);
        KvScope scope = new KvScope("sql", "fs1:aaaa", 1);
        cachedTokensOf("a", p, scope);
        long[] expected = ScopedHasher.of(new BlockHasher(config.namespace(), 4), scope).seqHashes(p);
        List<Long> stored = new ArrayList<>();
        for (KvEvent e : replay.events) {
            if (e.hasStored()) {
                e.getStored().getBlocksList().stream().map(StoredBlock::getSeqHash).forEach(stored::add);
            }
        }
        assertThat(stored).containsExactly(Arrays.stream(expected).boxed().toArray(Long[]::new));
        assertThat(KvEventReplay.asSet(s.residentBlocks().seqHashes()))
                .isEqualTo(KvEventReplay.asSet(expected));
    }

    @Test
    void anAdaptersKvNeverServesTheBaseModel() {
        int[] p = prompt(17, 4);
        assertThat(cachedTokensOf("base", p, KvScope.SHARED)).isZero();
        assertThat(cachedTokensOf("sql", p, KvScope.lora("sql"))).isZero();
        assertThat(cachedTokensOf("sql-again", p, KvScope.lora("sql"))).isEqualTo(16);
        assertThat(cachedTokensOf("base-again", p, KvScope.SHARED)).isEqualTo(16);
    }

    @Test
    void aPrefillOnlyRequestPinsTheBlocksOfItsScope() {
        EngineRequest r = request("p", prompt(9, 5), 1).withScope(TENANT_A);
        assertThat(s.scoped(r.scope()).seqHashes(r.promptTokens()))
                .isEqualTo(new BlockHasher(config.namespace().withTenantSalt("fs1:aaaa"), 4).seqHashes(r.promptTokens()));
    }
}
