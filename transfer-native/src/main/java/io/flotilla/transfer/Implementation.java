package io.flotilla.transfer;

/** Which implementation an agent uses. */
public enum Implementation {
    /** The native library when it loaded, otherwise the pure-Java implementation. */
    AUTO,
    /** The JNI library (shm, tcp, ucx when built); creating an agent fails if it did not load. */
    NATIVE,
    /** Pure Java (tcp only, wire-compatible with the native tcp backend). */
    JAVA
}
