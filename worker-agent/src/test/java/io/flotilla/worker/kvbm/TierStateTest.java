package io.flotilla.worker.kvbm;

import io.flotilla.protocol.v1.KvTier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lower tiers' state as a table: what its owner does (offload batches planned and committed with their
 * copies' results, onboardings pinned and finished, clear, close) and the events that come out, in order.
 * Host memory holds two blocks and disk two; seq hashes are small literals.
 */
class TierStateTest {

    private static final long A = 0xa, B = 0xb, C = 0xc, D = 0xd;

    /** One table row's world: the state and the events it announced. */
    static final class World {
        final List<String> events = new ArrayList<>();
        final TierState state = new TierState(new TierSlots(KvTier.KV_TIER_HOST, 2),
                new TierSlots(KvTier.KV_TIER_DISK, 2), new TierEvents() {
            @Override public void stored(KvTier tier, long seqHash) {
                events.add("stored " + name(tier) + " " + Long.toHexString(seqHash));
            }

            @Override public void removed(KvTier tier, long seqHash) {
                events.add("removed " + name(tier) + " " + Long.toHexString(seqHash));
            }

            @Override public void cleared(KvTier tier) {
                events.add("cleared " + name(tier));
            }
        }, 64);

        /** Offloads {@code blocks} whose copies all succeed (host copies and any disk demotion). */
        TierState.OffloadPlan offload(long... blocks) {
            TierState.OffloadPlan plan = state.reserve(blocks);
            boolean[] demoted = new boolean[blocks.length];
            java.util.Arrays.fill(demoted, true);
            state.commit(plan, demoted, new int[blocks.length]);
            return plan;
        }

        /** Onboards {@code block} from {@code tier}; its copy verified or not. */
        void onboard(long block, KvTier tier, boolean verified) {
            Onboarding job = state.pin(new long[] {block}, new KvTier[] {tier}, new ByteBuffer[] {ByteBuffer.allocate(1)});
            job.verified[0] = verified;
            state.finish(job);
        }

        private static String name(KvTier tier) {
            return tier == KvTier.KV_TIER_HOST ? "host" : "disk";
        }
    }

    record Row(String name, Consumer<World> steps, List<String> events, String host, String disk) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Row> table() {
        return Stream.of(
                new Row("copies into free host slots are stored in batch order", w -> w.offload(A, B),
                        List.of("stored host a", "stored host b"), "a,b", ""),
                new Row("a full host demotes its eldest block to disk", w -> {
                    w.offload(A, B);
                    w.offload(C);
                }, List.of("stored host a", "stored host b", "removed host a", "stored host c", "stored disk a"),
                        "b,c", "a"),
                new Row("a block used again outlives one used once", w -> {
                    w.offload(A, B);
                    w.state.touch(A);
                    w.offload(C);
                }, List.of("stored host a", "stored host b", "removed host b", "stored host c", "stored disk b"),
                        "a,c", "b"),
                new Row("a failed disk write loses the victim, not the new block", w -> {
                    w.offload(A, B);
                    TierState.OffloadPlan plan = w.state.reserve(new long[] {C});
                    w.state.commit(plan, new boolean[] {false}, new int[1]);
                }, List.of("stored host a", "stored host b", "removed host a", "stored host c"), "b,c", ""),
                new Row("one batch's removals go out tier by tier", w -> {
                    w.offload(A, B);
                    w.offload(C, D);
                    w.events.clear();
                    w.offload(A, B);
                }, List.of("removed host c", "removed host d", "removed disk a", "removed disk b",
                        "stored host a", "stored host b", "stored disk c", "stored disk d"), "a,b", "c,d"),
                new Row("a block stored meanwhile keeps its first copy", w -> {
                    TierState.OffloadPlan first = w.state.reserve(new long[] {A});
                    w.offload(A);
                    w.state.commit(first, new boolean[1], new int[1]);
                }, List.of("stored host a"), "a", ""),
                new Row("a verified onboarding changes nothing held", w -> {
                    w.offload(A);
                    w.onboard(A, KvTier.KV_TIER_HOST, true);
                }, List.of("stored host a"), "a", ""),
                new Row("a block that does not verify becomes a miss", w -> {
                    w.offload(A, B);
                    w.onboard(A, KvTier.KV_TIER_HOST, false);
                }, List.of("stored host a", "stored host b", "removed host a"), "b", ""),
                new Row("a block being onboarded counts as used and outlives the others", w -> {
                    w.offload(A, B);
                    Onboarding reading = w.state.pin(new long[] {A}, new KvTier[] {KvTier.KV_TIER_HOST},
                            new ByteBuffer[] {ByteBuffer.allocate(1)});
                    w.offload(C);
                    reading.verified[0] = true;
                    w.state.finish(reading);
                }, List.of("stored host a", "stored host b", "removed host b", "stored host c", "stored disk b"),
                        "a,c", "b"),
                new Row("clear empties both tiers", w -> {
                    w.offload(A, B);
                    w.offload(C);
                    w.state.clear();
                }, List.of("stored host a", "stored host b", "removed host a", "stored host c", "stored disk a",
                        "cleared host", "cleared disk"), "", ""),
                new Row("after close nothing is copied and a failed read keeps its block", w -> {
                    w.offload(A);
                    Onboarding reading = w.state.pin(new long[] {A}, new KvTier[] {KvTier.KV_TIER_HOST},
                            new ByteBuffer[] {ByteBuffer.allocate(1)});
                    w.state.close();
                    assertThat(w.state.wantsOffload(B)).isFalse();
                    assertThat(w.state.reserve(new long[] {B}).hostSlot()).containsExactly(-1);
                    w.state.finish(reading);
                }, List.of("stored host a"), "a", ""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void eventsOut(Row row) {
        World w = new World();
        row.steps().accept(w);
        assertThat(w.events).containsExactlyElementsOf(row.events());
        assertThat(held(w, KvTier.KV_TIER_HOST)).isEqualTo(row.host());
        assertThat(held(w, KvTier.KV_TIER_DISK)).isEqualTo(row.disk());
        w.state.slotsOf(KvTier.KV_TIER_HOST).verifyInvariants();
        w.state.slotsOf(KvTier.KV_TIER_DISK).verifyInvariants();
    }

    private static String held(World w, KvTier tier) {
        return java.util.Arrays.stream(w.state.slotsOf(tier).seqHashes()).sorted().mapToObj(Long::toHexString)
                .reduce((x, y) -> x + "," + y).orElse("");
    }

    @org.junit.jupiter.api.Test
    void totalsCountCopiesOnboardingsAndCorruptBlocks() {
        World w = new World();
        w.offload(A, B);
        w.offload(C);
        w.onboard(B, KvTier.KV_TIER_HOST, true);
        w.onboard(A, KvTier.KV_TIER_DISK, false);
        assertThat(w.state.stats(KvTier.KV_TIER_HOST).offloadedBlocks()).isEqualTo(3);
        assertThat(w.state.stats(KvTier.KV_TIER_HOST).offloadedBytes()).isEqualTo(3 * 64);
        assertThat(w.state.stats(KvTier.KV_TIER_DISK).offloadedBlocks()).isEqualTo(1);
        assertThat(w.state.stats(KvTier.KV_TIER_HOST).onboardedBlocks()).isEqualTo(1);
        assertThat(w.state.stats(KvTier.KV_TIER_DISK).corruptBlocks()).isEqualTo(1);
        assertThat(w.state.locate(A)).isEqualTo(KvTier.KV_TIER_UNSPECIFIED);
    }
}
