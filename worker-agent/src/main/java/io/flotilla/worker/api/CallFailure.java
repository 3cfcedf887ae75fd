package io.flotilla.worker.api;

import io.flotilla.worker.engine.DeadlineExceededException;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.RequestCancelledException;

/**
 * Why a call failed, in the worker's own terms; the transport maps each {@link Kind} to its code
 * ({@link GrpcErrors}).
 *
 * @param kind    what kind of failure
 * @param message what the client is told
 * @param cause   the exception behind an internal failure, or null
 */
public record CallFailure(Kind kind, String message, Throwable cause) {

    public enum Kind {
        /** The request can never be served as sent. */
        INVALID,
        /** The request is well formed but this worker must not serve it as it is now. */
        PRECONDITION,
        /** The engine is at capacity; another worker or a later try may serve it. */
        OVERLOADED,
        /** The worker or its engine cannot serve now (shutting down, engine down). */
        UNAVAILABLE,
        /** The worker does not serve this kind of call. */
        UNIMPLEMENTED,
        CANCELLED,
        DEADLINE_EXCEEDED,
        /** A fault of the worker or its engine. */
        INTERNAL
    }

    public static CallFailure of(Kind kind, String message) {
        return new CallFailure(kind, message, null);
    }

    /** An engine's exception: its kind from the exception's type, any other exception an internal failure. */
    public static CallFailure of(Throwable error) {
        if (error instanceof InvalidRequestException) {
            return of(Kind.INVALID, error.getMessage());
        }
        if (error instanceof EngineOverloadedException) {
            return of(Kind.OVERLOADED, error.getMessage());
        }
        if (error instanceof EngineUnavailableException) {
            return of(Kind.UNAVAILABLE, error.getMessage());
        }
        if (error instanceof RequestCancelledException) {
            return of(Kind.CANCELLED, error.getMessage());
        }
        if (error instanceof DeadlineExceededException) {
            return of(Kind.DEADLINE_EXCEEDED, error.getMessage());
        }
        return new CallFailure(Kind.INTERNAL, "engine failure: " + error.getMessage(), error);
    }
}
