package io.flotilla.gateway.metrics;

import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/** The tenant tag takes at most configured + extra + 1 values, whatever flows callers send. */
class TenantTagsTest {

    @Test
    void configuredFlowsKeepTheirTagTheFirstOthersTooAndEveryLaterFlowIsOther() {
        TenantTags tags = new TenantTags(Set.of("team-a"), 2);
        assertThat(tags.tag("team-a")).isEqualTo("team-a");
        assertThat(tags.tag("key-1")).isEqualTo("key-1");
        assertThat(tags.tag("key-2")).isEqualTo("key-2");
        assertThat(tags.tag("key-3")).isEqualTo(TenantTags.OTHER);
        assertThat(tags.tag("key-1")).isEqualTo("key-1"); // a tag once given stays
        assertThat(tags.tag("team-a")).isEqualTo("team-a"); // configured flows never count against the extra tags
        assertThat(tags.tag(null)).isEqualTo(TenantTags.OTHER);
        assertThat(tags.tag("")).isEqualTo(TenantTags.OTHER);
    }

    @Test
    void aMillionFlowsMakeAtMostExtraPlusConfiguredPlusOneTags() {
        TenantTags tags = new TenantTags(Set.of("team-a", "team-b"), 50);
        Set<String> seen = IntStream.range(0, 1_000_000).parallel().mapToObj(i -> tags.tag("flow-" + i))
                .collect(Collectors.toSet());
        seen.add(tags.tag("team-a"));
        seen.add(tags.tag("team-b"));
        assertThat(seen).hasSize(50 + 2 + 1).contains(TenantTags.OTHER, "team-a", "team-b");
    }

    @Test
    void noExtraTagsMeansOnlyConfiguredFlowsAreNamed() {
        TenantTags tags = new TenantTags(Set.of("team-a"), 0);
        assertThat(tags.tag("key-1")).isEqualTo(TenantTags.OTHER);
        assertThat(tags.tag("team-a")).isEqualTo("team-a");
    }
}
