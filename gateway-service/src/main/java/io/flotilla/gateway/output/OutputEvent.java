package io.flotilla.gateway.output;

import java.util.List;

/** The output of one request as the client sees it, choice by choice. */
public sealed interface OutputEvent {

    /** New output of a choice; any part may be empty, not all of them. */
    record Delta(int choice, String reasoning, String content, List<ToolCallDelta> toolCalls,
                 List<TokenLogprob> logprobs) implements OutputEvent {
    }

    /** A choice ended: {@code stop}, {@code length} or {@code tool_calls}. */
    record Done(int choice, String finishReason) implements OutputEvent {
    }

    /** Every choice ended. */
    record End() implements OutputEvent {
    }
}
