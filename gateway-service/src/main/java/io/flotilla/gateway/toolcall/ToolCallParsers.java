package io.flotilla.gateway.toolcall;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/** The tool-call parsers by configuration name ({@code flotilla.gateway.models.<m>.tool-parser}). */
public final class ToolCallParsers {

    private static final Map<String, ToolCallParser> BY_NAME = List.of(new HermesToolParser(), new Llama3JsonToolParser(),
            new MistralToolParser(), new DeepSeekV3ToolParser()).stream()
            .collect(Collectors.toUnmodifiableMap(ToolCallParser::name, Function.identity()));

    private ToolCallParsers() {
    }

    public static Optional<ToolCallParser> named(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    public static java.util.Set<String> names() {
        return new java.util.TreeSet<>(BY_NAME.keySet());
    }
}
