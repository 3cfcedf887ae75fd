package io.flotilla.gateway.output;

import io.flotilla.gateway.reasoning.ReasoningParser;
import io.flotilla.gateway.tokenize.Tokenizer;
import io.flotilla.gateway.toolcall.ToolCallParser;

import java.util.ArrayList;
import java.util.List;

/**
 * How one model's output is read: its tool-call parser and reasoning parser (either may be absent)
 * and the tokenizer that decodes their markers. Resolved once per model.
 *
 * @param tokenizer decodes the output, markers of the parsers included
 */
public record ModelOutput(ToolCallParser toolParser, ReasoningParser reasoning, Tokenizer tokenizer) {

    public static ModelOutput of(Tokenizer tokenizer, ToolCallParser toolParser, ReasoningParser reasoning) {
        List<String> markers = new ArrayList<>();
        if (toolParser != null) {
            markers.addAll(toolParser.specialMarkers());
        }
        if (reasoning != null) {
            markers.addAll(reasoning.markers());
        }
        return new ModelOutput(toolParser, reasoning, MarkedTokenizer.of(tokenizer, markers));
    }
}
