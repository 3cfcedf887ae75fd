package io.flotilla.router.service;

import io.flotilla.router.core.CostUnit;
import io.flotilla.router.core.Decision;
import io.flotilla.router.core.ModeUsed;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What each decision adds to the router's meters and to the counts {@code /actuator/router} shows. */
class RouterMetricsTest {

    private static Decision routed(String worker, String prefillWorker, ModeUsed mode, int overlap) {
        return new Decision(Decision.Outcome.ROUTED, worker, worker + ":7100", prefillWorker,
                prefillWorker.isEmpty() ? "" : prefillWorker + ":7100", overlap, 0, 100, 8, Map.of(), mode,
                CostUnit.MILLISECONDS, 0);
    }

    @Test
    void decisionsAreCountedByModeUsedAndDisaggregatedOnesSeparately() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RouterMetrics metrics = new RouterMetrics(registry);

        metrics.decided(routed("decode-0", "prefill-0", ModeUsed.KV, 4), 50_000);
        metrics.decided(routed("decode-0", "", ModeUsed.KV_APPROX, 2), 50_000);
        metrics.decided(routed("decode-1", "prefill-0", ModeUsed.KV, 0), 50_000);

        assertThat(registry.get("flotilla.router.decisions").tag("mode", "kv").counter().count()).isEqualTo(2);
        assertThat(registry.get("flotilla.router.decisions").tag("mode", "kv_approx").counter().count()).isEqualTo(1);
        assertThat(registry.get("flotilla.router.disaggregated").counter().count()).isEqualTo(2);
        assertThat(registry.get("flotilla.router.overlap_blocks").summary().totalAmount()).isEqualTo(6);
        assertThat(registry.get("flotilla.router.decision").timer().count()).isEqualTo(3);
        assertThat(metrics.decisionCounts()).containsEntry("kv", 2L).containsEntry("kv_approx", 1L)
                .containsEntry("disaggregated", 2L).containsEntry("busy", 0L);
    }
}
