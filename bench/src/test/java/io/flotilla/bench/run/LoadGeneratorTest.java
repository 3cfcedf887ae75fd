package io.flotilla.bench.run;

import io.flotilla.bench.client.CompletionSender;
import io.flotilla.bench.client.StreamMeasurement;
import io.flotilla.bench.client.StreamEvent;
import io.flotilla.bench.workload.Completion;
import io.flotilla.bench.workload.PlannedRequest;
import io.flotilla.bench.workload.Prompt;
import io.flotilla.bench.workload.Workload;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** The dispatcher against an in-memory sender that answers at once. */
class LoadGeneratorTest {

    /** Answers every request at once: ok, TTFT 5 ms, one token per prompt block, worker by prompt length parity. */
    private static final class InstantSender implements CompletionSender {
        final List<int[]> prompts = new ArrayList<>();

        @Override
        public CompletableFuture<StreamMeasurement> send(int[] prompt, int maxTokens, io.flotilla.bench.client.StreamRecorder r) {
            prompts.add(prompt);
            boolean ok = prompt.length != 13;
            return CompletableFuture.completedFuture(new StreamMeasurement(ok ? "ok" : "http_500", ok ? 200 : 500,
                    ok ? null : "boom", 5, 9, 1, 2, new float[] {1, 2}, 2, maxTokens,
                    ok ? new StreamEvent.Usage(prompt.length, 0, maxTokens) : null, "w" + (prompt.length % 2), "",
                    new int[] {77}, Double.NaN, "", ""));
        }
    }

    /** Open-loop prompts of the given lengths, all at time 0; each may ask for {@code turns} follow-ups. */
    private static final class ListWorkload implements Workload {
        final int[] lengths;
        final int turns;
        int next;
        final List<String> seenCompletions = new ArrayList<>();

        ListWorkload(int turns, int... lengths) {
            this.lengths = lengths;
            this.turns = turns;
        }

        @Override
        public PlannedRequest next() {
            if (next >= lengths.length) {
                return null;
            }
            int len = lengths[next];
            return new PlannedRequest(0, Prompt.of(new int[len]), 3, next++, 0);
        }

        @Override
        public FollowUp followUp(PlannedRequest done, Completion c) {
            seenCompletions.add(done.session() + "/" + done.turn() + ":" + c.ok() + ":" + c.outputTokenIds().length);
            if (done.turn() + 1 >= turns) {
                return null;
            }
            return new FollowUp(0, new PlannedRequest(0, Prompt.of(new int[done.prompt().length() + 1]), 3, done.session(),
                    done.turn() + 1));
        }

        @Override
        public String describe() {
            return "list";
        }
    }

    private static RunConfig config(long maxRequests, Duration duration) {
        return new RunConfig(maxRequests, duration, 0, 1, 16, Duration.ofSeconds(1));
    }

    @Test
    void sendsEveryRequestOnceInOrderAndRecordsResults() {
        InstantSender sender = new InstantSender();
        RunResult r = new LoadGenerator(config(0, null), new ListWorkload(1, 32, 32, 13, 48), sender).run();

        assertThat(r.stopReason()).isEqualTo("workload-exhausted");
        assertThat(r.requests()).extracting(RequestResult::id).containsExactly(0L, 1L, 2L, 3L);
        assertThat(r.requests()).extracting(q -> q.sent().promptLen()).containsExactly(32, 32, 13, 48);
        assertThat(r.requests()).extracting(q -> q.sent().oracleCachedTokens()).containsExactly(0, 16, 0, 32);
        assertThat(r.oraclePromptTokens()).isEqualTo(125);
        assertThat(r.oracleCachedTokens()).isEqualTo(48);
        RequestResult failed = r.requests().get(2);
        assertThat(failed.end().outcome()).isEqualTo("http_500");
        assertThat(failed.usage().promptTokens()).isEqualTo(-1);
        assertThat(failed.end().error()).isEqualTo("boom");
        RequestResult ok = r.requests().get(0);
        assertThat(ok.usage().cachedTokens()).isZero();
        assertThat(ok.usage().completionTokens()).isEqualTo(3);
        assertThat(ok.placement().worker()).isEqualTo("w0");
        assertThat(r.chunkGapsMs().count()).as("gaps of ok requests only").isEqualTo(6);
    }

    @Test
    void maxRequestsCountsFollowUpTurns() {
        ListWorkload w = new ListWorkload(3, 20, 20);
        RunResult r = new LoadGenerator(config(5, null), w, new InstantSender()).run();
        assertThat(r.stopReason()).isEqualTo("max-requests");
        assertThat(r.requests()).hasSize(5);
    }

    @Test
    void followUpsAreSentAfterTheirTurnCompletes() {
        ListWorkload w = new ListWorkload(3, 20, 30);
        RunResult r = new LoadGenerator(config(0, null), w, new InstantSender()).run();

        assertThat(r.requests()).hasSize(6);
        assertThat(w.seenCompletions).containsExactlyInAnyOrder("0/0:true:1", "0/1:true:1", "0/2:true:1",
                "1/0:true:1", "1/1:true:1", "1/2:true:1");
        for (long s = 0; s < 2; s++) {
            long session = s;
            assertThat(r.requests().stream().filter(q -> q.sent().session() == session).map(q -> q.sent().turn()).toList())
                    .containsExactly(0, 1, 2);
        }
    }

    @Test
    void aZeroDurationSendsNothing() {
        RunResult r = new LoadGenerator(config(0, Duration.ZERO), new ListWorkload(1, 20), new InstantSender()).run();
        assertThat(r.stopReason()).isEqualTo("duration");
        assertThat(r.requests()).isEmpty();
    }
}
