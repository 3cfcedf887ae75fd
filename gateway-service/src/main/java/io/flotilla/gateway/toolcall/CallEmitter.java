package io.flotilla.gateway.toolcall;

import java.util.function.Supplier;

/**
 * Numbers a parse's calls and sends them to the sink as OpenAI streams them: a call starts once its
 * name is known; arguments that arrived before the name are sent right after the start.
 */
final class CallEmitter {

    private final Supplier<String> ids;
    private int calls;
    private boolean open;

    CallEmitter(Supplier<String> ids) {
        this.ids = ids;
    }

    /** Calls started so far. */
    int calls() {
        return calls;
    }

    boolean open() {
        return open;
    }

    void start(String name, ToolCallSink out) {
        out.callStarted(calls++, ids.get(), name);
        open = true;
    }

    void arguments(String fragment, ToolCallSink out) {
        if (open && !fragment.isEmpty()) {
            out.callArguments(calls - 1, fragment);
        }
    }

    void end(ToolCallSink out) {
        if (open) {
            out.callEnded(calls - 1);
            open = false;
        }
    }

    /** Sends what {@code scanner} has read: the start once the name is known, then new arguments text. */
    void progress(JsonCallScanner scanner, ToolCallSink out) {
        if (!open && scanner.name() != null && !scanner.failed()) {
            start(scanner.name(), out);
        }
        if (open) {
            arguments(scanner.takeArguments(), out);
            if (scanner.done()) {
                end(out);
            }
        }
    }
}
