package io.flotilla.gateway.toolcall;

/**
 * The parse of one choice's output as it streams. Not thread-safe; one per choice, fed in order.
 * Text that might start a call marker is held back until it is decided; text that turns out not
 * to be a well-formed call before its name was sent is released as content (a malformed call is
 * content, never an error).
 */
public interface ToolCallStream {

    /** The next piece of decoded text. */
    void push(String text, ToolCallSink out);

    /** The output ended: held-back text is released (as content, or as the open call's arguments). */
    void finish(ToolCallSink out);
}
