package io.flotilla.gateway.tokenize;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StopStringMatcherTest {

    /** (stop strings, chunks, text released before the stop or end, stopped). */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(List.of("END"), List.of("abc", "dEN", "Dxyz"), "abcd", true),
                Arguments.of(List.of("END"), List.of("abcEND"), "abc", true),
                Arguments.of(List.of("END"), List.of("EN", "d", "x"), "ENdx", false),
                Arguments.of(List.of("END"), List.of("no stop here"), "no stop here", false),
                Arguments.of(List.of("xyz", "b"), List.of("aaxy", "zb"), "aa", true),
                Arguments.of(List.of("\n\n"), List.of("line\n", "\nnext"), "line", true),
                Arguments.of(List.of("😀"), List.of("hi ", "😀 there"), "hi ", true),
                Arguments.of(List.of("abcd", "bc"), List.of("ab", "cd"), "", true),
                Arguments.of(List.of("c", "bcd"), List.of("ab", "cd"), "a", true));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void releasesExactlyTheTextBeforeTheFirstStop(List<String> stops, List<String> chunks, String expected, boolean stopped) {
        StopStringMatcher m = new StopStringMatcher(stops);
        StringBuilder out = new StringBuilder();
        boolean sawStop = false;
        for (String c : chunks) {
            StopStringMatcher.Step step = m.push(c);
            out.append(step.text());
            sawStop |= step.stopped();
        }
        out.append(m.flush());
        assertThat(out.toString()).isEqualTo(expected);
        assertThat(sawStop).isEqualTo(stopped);
    }

    @Test
    void holdsBackOnlyWhatCouldStartAStopString() {
        StopStringMatcher m = new StopStringMatcher(List.of("STOP"));
        assertThat(m.push("hello ST").text()).isEqualTo("hello ");
        assertThat(m.push("X").text()).isEqualTo("STX");
    }

    @Test
    void nothingIsReleasedAfterAStop() {
        StopStringMatcher m = new StopStringMatcher(List.of("!"));
        assertThat(m.push("a!b").text()).isEqualTo("a");
        assertThat(m.push("more")).isEqualTo(new StopStringMatcher.Step("", true));
        assertThat(m.flush()).isEmpty();
    }

    @Test
    void withoutStopStringsEverythingPassesThrough() {
        StopStringMatcher m = new StopStringMatcher(List.of());
        assertThat(m.push("abc").text()).isEqualTo("abc");
        assertThat(m.flush()).isEmpty();
    }

    @Test
    void emptyStopStringsAreRefused() {
        assertThatThrownBy(() -> new StopStringMatcher(List.of(""))).isInstanceOf(IllegalArgumentException.class);
    }
}
