package io.flotilla.gateway.reasoning;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * How a reasoning model separates its thinking from its answer, by configuration name
 * ({@code flotilla.gateway.models.<m>.reasoning-parser}). Both families here use {@code <think>…</think>}:
 * <ul>
 *   <li>{@code deepseek-r1}: the chat template opens the think block itself, so the output starts in
 *       reasoning (a leading {@code <think>} is skipped) and everything up to {@code </think>} is
 *       reasoning — all of it when the tag never comes;</li>
 *   <li>{@code qwen3}: reasoning only when the output starts with {@code <think>} (Qwen3 with
 *       {@code enable_thinking}); otherwise the whole output is content. Also QwQ.</li>
 * </ul>
 * Immutable; each output gets its own {@link ReasoningStream}.
 *
 * @param name               configuration name
 * @param startsInReasoning  the output is reasoning until the end tag, without a start tag
 */
public record ReasoningParser(String name, String startTag, String endTag, boolean startsInReasoning) {

    public static final ReasoningParser DEEPSEEK_R1 = new ReasoningParser("deepseek-r1", "<think>", "</think>", true);
    public static final ReasoningParser QWEN3 = new ReasoningParser("qwen3", "<think>", "</think>", false);

    private static final Map<String, ReasoningParser> BY_NAME = Map.of(DEEPSEEK_R1.name(), DEEPSEEK_R1, QWEN3.name(), QWEN3);

    public static Optional<ReasoningParser> named(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    public static Set<String> names() {
        return new TreeSet<>(BY_NAME.keySet());
    }

    /** Marker texts the detokenizer must show even where the tokenizer marks them special. */
    public List<String> markers() {
        return List.of(startTag, endTag);
    }

    public ReasoningStream stream() {
        return new ReasoningStream(this);
    }
}
