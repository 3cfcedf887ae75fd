package io.flotilla.gateway.jinja;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The Python pieces chat templates rely on; every expected value is what CPython 3.11 returns. */
class PythonCompatTest {

    static Stream<Arguments> strMethods() {
        return Stream.of(
                Arguments.of("  a b  ", "strip", args(), "a b"),
                Arguments.of("xxaxx", "strip", args("x"), "a"),
                Arguments.of("\t a \n", "lstrip", args(), "a \n"),
                Arguments.of("a\n\n", "rstrip", args("\n"), "a"),
                Arguments.of("a,b,,c", "split", args(","), List.of("a", "b", "", "c")),
                Arguments.of("  a  b c ", "split", args(), List.of("a", "b", "c")),
                Arguments.of("a b c d", "split", args(null, 2L), List.of("a", "b", "c d")),
                Arguments.of("a,b,c", "split", args(",", 1L), List.of("a", "b,c")),
                Arguments.of("a b c d", "rsplit", args(null, 1L), List.of("a b c", "d")),
                Arguments.of("a,b,c", "rsplit", args(",", 1L), List.of("a,b", "c")),
                Arguments.of("a.b|c", "split", args("."), List.of("a", "b|c")), // literal, not a regex
                Arguments.of("<think>x</think>y", "split", args("</think>"), List.of("<think>x", "y")),
                Arguments.of("l1\nl2\r\nl3\n", "splitlines", args(), List.of("l1", "l2", "l3")),
                Arguments.of("", "splitlines", args(), List.of()),
                Arguments.of("hello world", "title", args(), "Hello World"),
                Arguments.of("hELLO", "capitalize", args(), "Hello"),
                Arguments.of("aaa", "replace", args("a", "b", 2L), "bba"),
                Arguments.of("abc", "replace", args("", "-", 2L), "-a-bc"),
                Arguments.of("abcabc", "find", args("c"), 2),
                Arguments.of("abcabc", "rfind", args("c"), 5),
                Arguments.of("abcabc", "count", args("bc"), 2),
                Arguments.of(", ", "join", args(List.of("a", "b", "c")), "a, b, c"),
                Arguments.of("tool_response", "startswith", args(List.of("x", "tool")), true),
                Arguments.of("abc", "endswith", args("bc"), true),
                Arguments.of(" \t", "isspace", args(), true),
                Arguments.of("123", "isdigit", args(), true),
                Arguments.of("ABC1", "isupper", args(), true),
                Arguments.of("MiXed", "lower", args(), "mixed"));
    }

    @ParameterizedTest(name = "{0}.{1}{2}")
    @MethodSource
    void strMethods(String receiver, String method, List<Object> args, Object expected) {
        assertThat(PythonStringMethods.call(receiver, method, args.toArray())).isEqualTo(expected);
    }

    @Test
    void strftime() {
        ZonedDateTime t = ZonedDateTime.of(2024, 7, 6, 9, 5, 3, 123_456_000, ZoneOffset.UTC);
        assertThat(PythonStrftime.format(t, "%d %b %Y|%A %B %m %y %H:%M:%S.%f %I%p %j %w %z %-d %e %%"))
                .isEqualTo("06 Jul 2024|Saturday July 07 24 09:05:03.123456 09AM 188 6 +0000 6  6 %");
    }

    @Test
    void jsonDumps() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("a", Arrays.asList(1L, 2.5, null, true, Map.of()));
        value.put("b", "é\u0001\u2028");
        value.put("c", new ArrayList<>());
        assertThat(PythonJson.dumps(value, null, null, false))
                .isEqualTo("{\"a\": [1, 2.5, null, true, {}], \"b\": \"é\\u0001\u2028\", \"c\": []}");

        Map<String, Object> nested = new LinkedHashMap<>();
        nested.put("a", List.of(1L, Map.of("x", List.of())));
        nested.put("b", Map.of());
        assertThat(PythonJson.dumps(nested, 2, null, false))
                .isEqualTo("{\n  \"a\": [\n    1,\n    {\n      \"x\": []\n    }\n  ],\n  \"b\": {}\n}");

        Map<String, Object> unsorted = new LinkedHashMap<>();
        unsorted.put("b", 1L);
        unsorted.put("a", 2L);
        assertThat(PythonJson.dumps(unsorted, null, List.of(",", ":"), true)).isEqualTo("{\"a\":2,\"b\":1}");
    }

    @Test
    void floatsPrintAsPythonsRepr() {
        assertThat(List.of(1.0, 0.1, 1e-5, 1e16, 1.5e16, 123456789.125, 1e-4, 0.00012, 2.5e-7, -3.0, 1e22).stream()
                .map(PythonJson::pythonFloat).toList())
                .containsExactly("1.0", "0.1", "1e-05", "1e+16", "1.5e+16", "123456789.125", "0.0001", "0.00012",
                        "2.5e-07", "-3.0", "1e+22");
    }

    private static List<Object> args(Object... args) {
        return Arrays.asList(args);
    }
}
