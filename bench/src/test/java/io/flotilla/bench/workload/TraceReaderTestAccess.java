package io.flotilla.bench.workload;

import java.nio.file.Path;

/** Lets tests in other packages find the shared trace the way {@link TraceReaderTest} does. */
public final class TraceReaderTestAccess {

    private TraceReaderTestAccess() {
    }

    public static Path sharedTrace() {
        return TraceReaderTest.sharedTrace();
    }

    public static Path sample() {
        return TraceReaderTest.sample();
    }
}
