package io.flotilla.worker.api;

/**
 * Where one call's answers go, whatever carries them to the client: the messages in order, then
 * either {@link #complete()} or one {@link #fail}. Generation and handoff write only here; the gRPC
 * stream behind it is {@link GrpcReplies}. Calls for one call are made by one thread at a time (a
 * request with several choices serializes them in {@link GenerateOutput}).
 *
 * @param <T> the message type of the call
 */
public interface Replies<T> {

    void next(T message);

    void complete();

    /** Ends the call with a failure; nothing follows. */
    void fail(CallFailure failure);

    /** Whether the client gave up on the call; after that nothing it is sent reaches it. */
    boolean cancelled();
}
