package io.flotilla.gateway.toolcall;

import java.util.List;
import java.util.function.Supplier;

/**
 * How one model family writes tool calls in its output (chosen per model,
 * {@code flotilla.gateway.models.<m>.tool-parser}). Implementations are stateless and thread-safe;
 * each output gets its own {@link ToolCallStream}.
 */
public interface ToolCallParser {

    /** The configuration name, e.g. {@code hermes}. */
    String name();

    /**
     * Marker texts the parser must see that tokenizers treat as special tokens (which the detokenizer
     * otherwise renders as nothing), e.g. Mistral's {@code [TOOL_CALLS]}.
     */
    default List<String> specialMarkers() {
        return List.of();
    }

    /** A parse of one output; {@code ids} gives each call its id. */
    ToolCallStream stream(Supplier<String> ids);

    /** Call ids: OpenAI's {@code call_} and 24 letters and digits; Mistral's templates want 9. */
    default Supplier<String> ids() {
        return ToolCallIds.openAi();
    }
}
