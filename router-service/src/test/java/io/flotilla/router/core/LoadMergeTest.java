package io.flotilla.router.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class LoadMergeTest {

    @ParameterizedTest(name = "[{index}] {0}(report={1}, booked={2}, bookedAtReport={3}) = {4}")
    @CsvSource({
            "DELTA, 1000, 300, 200, 1100", // 100 more booked since the report
            "DELTA, 1000, 100, 300,  800", // 200 finished since the report
            "DELTA,  100,   0, 500,    0", // never below zero
            "DELTA,    0, 300,   0,  300", // no report yet: the bookings
            "MAX,   1000, 300, 200, 1000",
            "MAX,    100, 300, 200,  300",
            "SUM,   1000, 300, 200, 1300",
    })
    void merges(LoadMerge merge, long report, long booked, long bookedAtReport, long expected) {
        assertThat(merge.merge(report, booked, bookedAtReport)).isEqualTo(expected);
    }
}
