package io.flotilla.cluster.launcher;

/** A failure the launcher reports as one line to the user (no stack trace). */
public final class LauncherException extends RuntimeException {

    public LauncherException(String message) {
        super(message);
    }
}
