package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateChunk;

/**
 * The replies of one Generate, shared by its choices (one, or {@code n}): writes are serialized
 * (choices may be served on different engine threads), the stream completes after the last choice's
 * final chunk, and the first error ends it and runs {@code onFailure} (which cancels the other
 * choices). After the client cancelled, or after the stream ended, nothing more is written.
 */
final class GenerateOutput {

    private final Replies<GenerateChunk> stream;
    private final int choices;
    private Runnable onFailure = () -> { };
    private int finished;
    private boolean ended;

    GenerateOutput(Replies<GenerateChunk> stream, int choices) {
        this.stream = stream;
        this.choices = choices;
    }

    synchronized void onFailure(Runnable action) {
        this.onFailure = action;
    }

    synchronized boolean closed() {
        return ended || stream.cancelled();
    }

    synchronized void tokens(GenerateChunk chunk) {
        if (!closed()) {
            stream.next(chunk);
        }
    }

    /** A choice's final chunk (finish reason and usage); the last one completes the stream. */
    synchronized void finished(GenerateChunk last) {
        if (closed()) {
            return;
        }
        stream.next(last);
        if (++finished == choices) {
            ended = true;
            stream.complete();
        }
    }

    void failed(CallFailure failure) {
        Runnable cancelOthers;
        synchronized (this) {
            if (closed()) {
                return;
            }
            ended = true;
            stream.fail(failure);
            cancelOthers = onFailure;
        }
        cancelOthers.run();
    }
}
