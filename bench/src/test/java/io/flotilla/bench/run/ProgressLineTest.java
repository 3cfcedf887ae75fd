package io.flotilla.bench.run;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

class ProgressLineTest {

    @Test
    void showsCountsFailuresByOutcomeAndRates() {
        Map<String, Long> failures = new TreeMap<>(Map.of("http_503", 2L, "timeout", 1L));
        assertThat(ProgressLine.format(12.04, 120, 115, 3, failures, 9.55, 1234.4))
                .isEqualTo("[   12.0s] sent 120 | ok 115 | failed 3 (http_503=2 timeout=1) | in flight 2 | 9.6 req/s | 1234 tok/s");
        assertThat(ProgressLine.format(0, 0, 0, 0, Map.of(), 0, 0))
                .isEqualTo("[    0.0s] sent 0 | ok 0 | failed 0 | in flight 0 | 0.0 req/s | 0 tok/s");
    }
}
