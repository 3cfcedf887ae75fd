package io.flotilla.worker.kv;

/**
 * Why a decode worker did not use a handoff. {@code reason} is a short label for metrics
 * ({@code model}, {@code kv_layout}, {@code block_size}, {@code epoch}, {@code lease_expired},
 * {@code prompt}, {@code identity}, {@code unsupported}, {@code capacity}, {@code transfer},
 * {@code verify}, {@code cancelled}, {@code engine_params}); the message is what the client sees in
 * {@code handoff_refused_reason}.
 */
public final class HandoffFailure extends Exception {

    private final String reason;

    public HandoffFailure(String reason, String message) {
        super(message);
        this.reason = reason;
    }

    public HandoffFailure(String reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public String reason() {
        return reason;
    }
}
