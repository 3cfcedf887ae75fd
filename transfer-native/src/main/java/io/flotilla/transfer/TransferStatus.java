package io.flotilla.transfer;

/** State of a {@link TransferRequest}. DONE and ERROR are final. */
public enum TransferStatus {
    PENDING,
    DONE,
    ERROR;

    static TransferStatus fromNative(int status) {
        return switch (status) {
            case 0 -> PENDING;
            case 1 -> DONE;
            default -> ERROR;
        };
    }
}
