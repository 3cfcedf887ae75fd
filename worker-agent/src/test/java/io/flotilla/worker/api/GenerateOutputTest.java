package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The replies of one Generate through the transport-neutral port, with an in-memory {@link Replies}. */
class GenerateOutputTest {

    /** Records what a call was sent, as a client would see it. */
    static final class RecordedReplies<T> implements Replies<T> {
        final List<String> seen = new ArrayList<>();
        boolean cancelled;

        @Override public void next(T message) {
            seen.add("next " + ((GenerateChunk) message).getChoice());
        }

        @Override public void complete() {
            seen.add("complete");
        }

        @Override public void fail(CallFailure failure) {
            seen.add("fail " + failure.kind() + ": " + failure.message());
        }

        @Override public boolean cancelled() {
            return cancelled;
        }
    }

    private static GenerateChunk chunk(int choice) {
        return GenerateChunk.newBuilder().setChoice(choice).build();
    }

    @Test
    void completesAfterTheLastChoicesFinalChunk() {
        RecordedReplies<GenerateChunk> replies = new RecordedReplies<>();
        GenerateOutput out = new GenerateOutput(replies, 2);
        out.tokens(chunk(0));
        out.finished(chunk(0));
        out.tokens(chunk(1));
        out.finished(chunk(1));
        out.tokens(chunk(1));
        assertThat(replies.seen).containsExactly("next 0", "next 0", "next 1", "next 1", "complete");
    }

    @Test
    void theFirstFailureEndsTheCallAndCancelsTheOtherChoicesOnce() {
        RecordedReplies<GenerateChunk> replies = new RecordedReplies<>();
        GenerateOutput out = new GenerateOutput(replies, 2);
        AtomicInteger cancels = new AtomicInteger();
        out.onFailure(cancels::incrementAndGet);
        out.tokens(chunk(0));
        out.failed(CallFailure.of(new EngineOverloadedException("full")));
        out.failed(CallFailure.of(new EngineUnavailableException("down")));
        out.finished(chunk(1));
        assertThat(replies.seen).containsExactly("next 0", "fail OVERLOADED: full");
        assertThat(cancels).hasValue(1);
        assertThat(out.closed()).isTrue();
    }

    @Test
    void nothingReachesAClientThatCancelled() {
        RecordedReplies<GenerateChunk> replies = new RecordedReplies<>();
        GenerateOutput out = new GenerateOutput(replies, 1);
        out.tokens(chunk(0));
        replies.cancelled = true;
        out.tokens(chunk(0));
        out.finished(chunk(0));
        out.failed(CallFailure.of(new InvalidRequestException("late")));
        assertThat(replies.seen).containsExactly("next 0");
    }

    @Test
    void failuresMapToTheirGrpcCodesWithTheEngineMessage() {
        record Row(Throwable error, Status.Code code, String description) { }
        List<Row> table = List.of(
                new Row(new InvalidRequestException("bad"), Status.Code.INVALID_ARGUMENT, "bad"),
                new Row(new EngineOverloadedException("full"), Status.Code.RESOURCE_EXHAUSTED, "full"),
                new Row(new EngineUnavailableException("down"), Status.Code.UNAVAILABLE, "down"),
                new Row(new io.flotilla.worker.engine.RequestCancelledException("gone"), Status.Code.CANCELLED, "gone"),
                new Row(new io.flotilla.worker.engine.DeadlineExceededException("late"), Status.Code.DEADLINE_EXCEEDED, "late"),
                new Row(new IllegalStateException("boom"), Status.Code.INTERNAL, "engine failure: boom"));
        for (Row row : table) {
            Status status = GrpcErrors.toStatus(row.error());
            assertThat(status.getCode()).as(row.error().toString()).isEqualTo(row.code());
            assertThat(status.getDescription()).isEqualTo(row.description());
        }
        assertThat(GrpcErrors.toStatus(new IllegalStateException("boom")).getCause()).isInstanceOf(IllegalStateException.class);
        assertThat(GrpcErrors.toStatus(CallFailure.of(CallFailure.Kind.PRECONDITION, "no salt")).getCode())
                .isEqualTo(Status.Code.FAILED_PRECONDITION);
    }
}
