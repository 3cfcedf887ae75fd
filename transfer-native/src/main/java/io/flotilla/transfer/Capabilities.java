package io.flotilla.transfer;

import java.util.Optional;
import java.util.Set;

/**
 * What this process can do.
 *
 * @param nativeLoaded    whether the JNI library loaded
 * @param nativeLoadError why it did not, when it did not
 * @param nativeBackends  backends compiled into the native library (empty when it did not load)
 * @param javaBackends    backends of the pure-Java engine
 * @param ucx             whether the UCX backend was built and loaded, and if not why (for operators)
 */
public record Capabilities(boolean nativeLoaded, Optional<String> nativeLoadError, Set<Backend> nativeBackends,
        Set<Backend> javaBackends, String ucx) {

    /** The backends an {@link Implementation#AUTO} agent gets. */
    public Set<Backend> backends() {
        return nativeLoaded ? nativeBackends : javaBackends;
    }
}
