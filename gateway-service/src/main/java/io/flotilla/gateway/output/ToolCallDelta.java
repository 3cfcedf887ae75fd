package io.flotilla.gateway.output;

/**
 * A piece of a tool call as OpenAI streams it: the first piece of call {@code index} carries its
 * {@code id} and {@code name} (and empty arguments), later pieces only argument text.
 */
public record ToolCallDelta(int index, String id, String name, String arguments) {

    public boolean first() {
        return id != null;
    }
}
