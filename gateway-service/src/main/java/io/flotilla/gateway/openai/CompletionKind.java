package io.flotilla.gateway.openai;

/** The two generation endpoints; they differ in input (messages vs prompt) and output shape. */
public enum CompletionKind {
    /** {@code POST /v1/chat/completions}: objects {@code chat.completion} / {@code chat.completion.chunk}. */
    CHAT("chatcmpl-", "chat.completion", "chat.completion.chunk"),
    /** {@code POST /v1/completions}: object {@code text_completion}, streamed and not. */
    TEXT("cmpl-", "text_completion", "text_completion");

    private final String idPrefix;
    private final String object;
    private final String chunkObject;

    CompletionKind(String idPrefix, String object, String chunkObject) {
        this.idPrefix = idPrefix;
        this.object = object;
        this.chunkObject = chunkObject;
    }

    public String idPrefix() {
        return idPrefix;
    }

    public String object() {
        return object;
    }

    public String chunkObject() {
        return chunkObject;
    }
}
