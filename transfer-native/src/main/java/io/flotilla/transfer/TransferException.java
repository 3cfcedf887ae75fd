package io.flotilla.transfer;

import java.nio.charset.StandardCharsets;

/**
 * A transfer operation failed. Carries the {@link ErrorCode} and the message of the backend that
 * failed (messages from the target side start with {@code "target: "}).
 */
public class TransferException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final ErrorCode code;
    private final String detail;

    public TransferException(ErrorCode code, String detail) {
        this(code, detail, null);
    }

    public TransferException(ErrorCode code, String detail, Throwable cause) {
        super(code + ": " + detail, cause);
        this.code = code;
        this.detail = detail;
    }

    public ErrorCode code() {
        return code;
    }

    /** The message without the code prefix. */
    public String detail() {
        return detail;
    }

    /** Called by the JNI binding: messages arrive as UTF-8 bytes because peers supply parts of them. */
    static TransferException fromNative(int code, byte[] message) {
        return new TransferException(ErrorCode.fromCode(code), new String(message, StandardCharsets.UTF_8));
    }
}
