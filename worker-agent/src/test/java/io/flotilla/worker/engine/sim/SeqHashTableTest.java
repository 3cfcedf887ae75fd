package io.flotilla.worker.engine.sim;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Differential test of the open-addressing table against a HashMap. */
class SeqHashTableTest {

    @Property(seed = "20250101", tries = 200)
    void behavesLikeAMap(@ForAll @Size(max = 400) List<@IntRange(min = 0, max = 63) Integer> keys,
                         @ForAll @Size(max = 400) List<Boolean> removes) {
        SeqHashTable table = new SeqHashTable(64);
        Map<Long, Integer> reference = new HashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            // Few distinct keys, spread so that many share probe runs.
            long key = keys.get(i) * 0x1000000000000L;
            boolean remove = i < removes.size() && removes.get(i);
            if (remove) {
                assertThat(table.remove(key)).isEqualTo(reference.containsKey(key) ? reference.remove(key) : -1);
            } else if (!reference.containsKey(key)) {
                table.put(key, i);
                reference.put(key, i);
            }
            assertThat(table.size()).isEqualTo(reference.size());
        }
        for (int k = 0; k < 64; k++) {
            long key = k * 0x1000000000000L;
            assertThat(table.get(key)).isEqualTo(reference.getOrDefault(key, -1));
        }
    }
}
