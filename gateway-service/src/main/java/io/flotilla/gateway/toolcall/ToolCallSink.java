package io.flotilla.gateway.toolcall;

/**
 * Receives what a tool-call parse found in a model's output, in output order: text that is ordinary
 * content, and calls as OpenAI streams them — a start with index, id and name, then fragments of
 * the arguments (JSON text as the model wrote it), then an end.
 */
public interface ToolCallSink {

    void content(String text);

    void callStarted(int index, String id, String name);

    void callArguments(int index, String fragment);

    /** The call's text is complete (its closing marker or bracket arrived). */
    default void callEnded(int index) {
    }

    /** What looked like the start of a call was not one; its text was (or is about to be) sent as content. */
    default void rejected() {
    }
}
