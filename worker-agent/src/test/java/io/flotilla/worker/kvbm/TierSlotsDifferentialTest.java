package io.flotilla.worker.kvbm;

import io.flotilla.protocol.v1.KvTier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lower tier's bookkeeping ({@link TierSlots}: open-addressing index, segmented LRU in flat arrays,
 * pins) against a naive model written the plain way (maps and lists), under seeded random operations.
 * After each one: the same lookups, the same victims, the same held set, and the tier's invariants.
 */
class TierSlotsDifferentialTest {

    static final int SLOTS = 12;

    /** The plain model: slot → (hash, state), two ordered lists for the segments, pin counts. */
    static final class Model {
        final Map<Long, Integer> index = new HashMap<>();
        final Map<Integer, Long> key = new HashMap<>();
        final List<Integer> probation = new ArrayList<>();
        final List<Integer> protect = new ArrayList<>();
        final Map<Integer, Integer> pins = new HashMap<>();
        final List<Integer> dropped = new ArrayList<>();
        final List<Integer> free = new ArrayList<>();
        final List<Integer> reserved = new ArrayList<>();
        final int protectedCapacity = (int) (SLOTS * 0.8);

        Model() {
            for (int i = SLOTS - 1; i >= 0; i--) {
                free.add(i);
            }
        }

        /** Returns {slot, victim hash or null}. */
        Object[] reserve() {
            if (!free.isEmpty()) {
                int slot = free.remove(free.size() - 1);
                reserved.add(slot);
                return new Object[] {slot, null};
            }
            List<Integer> order = new ArrayList<>(probation);
            order.addAll(protect);
            int looked = 0;
            for (int slot : order) {
                if (looked++ > 64) {
                    break;
                }
                if (pins.getOrDefault(slot, 0) == 0) {
                    long victim = key.get(slot);
                    probation.remove((Integer) slot);
                    protect.remove((Integer) slot);
                    index.remove(victim);
                    reserved.add(slot);
                    return new Object[] {slot, victim};
                }
            }
            return new Object[] {-1, null};
        }

        void commit(int slot, long hash) {
            reserved.remove((Integer) slot);
            key.put(slot, hash);
            index.put(hash, slot);
            probation.add(slot);
        }

        void touch(int slot) {
            if (!probation.remove((Integer) slot) && !protect.remove((Integer) slot)) {
                return;
            }
            protect.add(slot);
            while (protect.size() > protectedCapacity) {
                probation.add(protect.remove(0));
            }
        }

        void drop(int slot) {
            probation.remove((Integer) slot);
            protect.remove((Integer) slot);
            index.remove(key.get(slot));
            if (pins.getOrDefault(slot, 0) > 0) {
                dropped.add(slot);
            } else {
                free.add(slot);
            }
        }

        void unpin(int slot) {
            int n = pins.merge(slot, -1, Integer::sum);
            if (n == 0 && dropped.remove((Integer) slot)) {
                free.add(slot);
            }
        }
    }

    record Op(int kind, int a) {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return Combinators.combine(Arbitraries.integers().between(0, 99), Arbitraries.integers().between(0, 40))
                .as(Op::new).list().ofMinSize(20).ofMaxSize(200);
    }

    @Property(seed = "170170", tries = 300)
    void agreesWithThePlainModel(@ForAll("ops") List<Op> ops) {
        TierSlots sut = new TierSlots(KvTier.KV_TIER_HOST, SLOTS);
        Model ref = new Model();
        TierSlots.Victim[] victim = new TierSlots.Victim[1];
        List<Integer> pinned = new ArrayList<>();
        for (Op op : ops) {
            long hash = op.a() * 0x9E3779B97F4A7C15L; // 41 distinct blocks over 12 slots: evictions are common
            int k = op.kind();
            if (k < 40) {
                if (sut.lookup(hash) >= 0) {
                    continue; // a tier holds each block once; the store path checks first
                }
                int slot = sut.reserve(victim);
                Object[] expected = ref.reserve();
                assertThat(slot).as("reserved slot").isEqualTo(expected[0]);
                assertThat(victim[0] == null ? null : victim[0].seqHash()).as("victim").isEqualTo(expected[1]);
                if (slot >= 0) {
                    if (op.a() % 7 == 0) {
                        sut.abandon(slot);
                        ref.reserved.remove((Integer) slot);
                        ref.free.add(slot);
                    } else {
                        sut.commit(slot, hash, op.a());
                        ref.commit(slot, hash);
                    }
                }
            } else if (k < 65) {
                int slot = sut.lookup(hash);
                assertThat(slot).as("lookup").isEqualTo(ref.index.getOrDefault(hash, -1));
                if (slot >= 0) {
                    sut.touch(slot);
                    ref.touch(slot);
                }
            } else if (k < 78) {
                int slot = sut.lookup(hash);
                if (slot >= 0) {
                    sut.pin(slot);
                    ref.pins.merge(slot, 1, Integer::sum);
                    pinned.add(slot);
                }
            } else if (k < 90) {
                if (!pinned.isEmpty()) {
                    int slot = pinned.remove(op.a() % pinned.size());
                    sut.unpin(slot);
                    ref.unpin(slot);
                }
            } else if (k < 98) {
                int slot = sut.lookup(hash);
                if (slot >= 0) {
                    sut.drop(slot);
                    ref.drop(slot);
                }
            } else {
                long[] gone = sut.clear();
                assertThat(gone).hasSize(ref.index.size());
                ref.index.values().stream().sorted().toList().forEach(ref::drop); // the tier clears in slot order
            }
            sut.verifyInvariants();
            assertThat(sut.used()).isEqualTo(ref.index.size());
            Map<Long, Integer> held = new LinkedHashMap<>();
            for (long h : sut.seqHashes()) {
                held.put(h, sut.lookup(h));
            }
            assertThat(held).isEqualTo(ref.index);
            long xor = 0;
            for (long h : ref.index.keySet()) {
                xor ^= h;
            }
            assertThat(sut.xor()).isEqualTo(xor);
        }
    }
}
