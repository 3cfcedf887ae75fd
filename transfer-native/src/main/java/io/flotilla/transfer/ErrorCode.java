package io.flotilla.transfer;

/** Why a transfer operation failed; the numeric codes are shared with the native library and the wire. */
public enum ErrorCode {
    INVALID_ARGUMENT(1),
    /** The remote agent's metadata is not loaded, or the endpoint now serves another agent (restarted peer). */
    UNKNOWN_AGENT(2),
    /** A descriptor reaches outside the registered region (or address range) it names. */
    OUT_OF_BOUNDS(3),
    /** The region id is unknown or was deregistered. */
    UNKNOWN_REGION(4),
    /** No backend or memory kind available for this request (VRAM, shm across hosts, disabled backend). */
    UNSUPPORTED(5),
    IO(6),
    TIMEOUT(7),
    CANCELLED(8),
    /** The agent was closed. */
    CLOSED(9),
    NO_MEMORY(10),
    /** The peer spoke a malformed or foreign protocol (or sent malformed metadata). */
    PROTOCOL(11);

    private final int code;

    ErrorCode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static ErrorCode fromCode(int code) {
        for (ErrorCode c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return PROTOCOL;
    }
}
