package io.flotilla.protocol.kafka;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The first full read is reaching the end offsets first seen, on every partition, whatever came after them. */
class TopicTailerCatchUpTest {

    private static final TopicPartition P0 = new TopicPartition("t", 0);
    private static final TopicPartition P1 = new TopicPartition("t", 1);

    @Test
    void reachedOnlyWhenEveryPartitionIsAtOrPastItsMark() {
        Map<TopicPartition, Long> mark = Map.of(P0, 100L, P1, 50L);
        assertThat(TopicTailer.reached(mark, Map.of(P0, 100L, P1, 50L))).isTrue();
        assertThat(TopicTailer.reached(mark, Map.of(P0, 4_000L, P1, 51L))).as("records written since").isTrue();
        assertThat(TopicTailer.reached(mark, Map.of(P0, 100L, P1, 49L))).isFalse();
        assertThat(TopicTailer.reached(mark, Map.of(P0, 100L))).as("a partition not read yet").isFalse();
        assertThat(TopicTailer.reached(Map.of(), Map.of())).as("an empty topic").isTrue();
    }
}
