package io.flotilla.gateway.output;

/** Output as the client sees it: text deltas, then one {@link Done}. */
public sealed interface TextEvent {

    /** Text to append; never empty. */
    record Delta(String text) implements TextEvent {
    }

    /** End of the output; {@code finishReason} is OpenAI's {@code stop} or {@code length}. */
    record Done(String finishReason) implements TextEvent {
    }
}
