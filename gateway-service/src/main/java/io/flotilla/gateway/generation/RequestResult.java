package io.flotilla.gateway.generation;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.protocol.v1.RoutingMode;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything known about one request, as an immutable value folded from its {@link RequestEvent}s
 * ({@link #apply}): the tokens generated so far (the migration state), which workers served it and how
 * they were chosen, timings, usage and how the response went. A new event gives a new value; readers
 * on other threads see whole values only.
 *
 * @param generated           tokens generated so far, across workers (of every choice when n &gt; 1)
 * @param excluded            workers that failed this request, in order
 * @param worker              the worker serving it (or that last served it); empty before routing
 * @param firstWorker         the worker that produced the first token; empty before it
 * @param mode                how {@code worker} was chosen; null before routing
 * @param predicted           the overlap the last routing predicted for {@code worker}; null before routing
 * @param prefillWorkerTried  the prefill worker of the current attempt, empty when none
 * @param prefillCachedTokens the prefill worker's cached prompt tokens
 * @param workerCachedTokens  the last worker's cached prompt tokens (from its usage)
 * @param handoffUsed         the last usage said the decode worker used the handoff
 * @param handoffSeen         some chunk said the decode worker continued from the handoff
 * @param attemptFinished     the current worker sent its last chunk (of every choice)
 * @param queueWait           time waited in flow control (every wait, after busy answers too), null before dispatch
 * @param finishReason        what the client was told the output ended with; null until then
 * @param streamedError       an error sent inside a started stream, or null
 * @param intake              what the HTTP side learned of the request before it ran
 */
public record RequestResult(Instant arrived, TokenLog generated, List<String> excluded, String worker,
                            String firstWorker, RoutingMode mode, OverlapPrediction predicted, int migrations, Instant firstTokenAt,
                            Instant lastTokenAt, String prefillWorkerTried, int prefillCachedTokens,
                            int workerCachedTokens, boolean handoffUsed, boolean handoffSeen, boolean attemptFinished,
                            Duration queueWait, String finishReason, ApiError streamedError, boolean responseStarted,
                            boolean abandoned, RequestIntake intake) {

    public static RequestResult arrived(Instant at) {
        return new RequestResult(at, TokenLog.EMPTY, List.of(), "", "", null, null, 0, null, null, "", 0, 0, false, false,
                false, null, null, null, false, false, RequestIntake.NONE);
    }

    public RequestResult apply(RequestEvent event) {
        Builder b = new Builder(this);
        if (event instanceof RequestEvent.Intake i) {
            b.intake = intake.apply(i);
        } else if (event instanceof RequestEvent.Dispatched d) {
            b.queueWait = queueWait == null ? d.waited() : queueWait.plus(d.waited()); // waits again after busy
        } else if (event instanceof RequestEvent.Routed r) {
            b.worker = r.worker();
            b.mode = r.mode();
            b.predicted = r.predicted();
            b.attemptFinished = false;
            b.prefillWorkerTried = "";
        } else if (event instanceof RequestEvent.Prefilled p) {
            b.prefillWorkerTried = p.prefillWorker();
            b.prefillCachedTokens = p.cachedTokens();
        } else if (event instanceof RequestEvent.Tokens t) {
            if (t.ids().length > 0) {
                b.generated = generated.append(t.ids());
                if (firstTokenAt == null) {
                    b.firstTokenAt = t.at();
                    b.firstWorker = worker;
                }
                b.lastTokenAt = t.at();
            }
            if (t.handoffUsed()) {
                b.handoffSeen = true;
            }
            if (t.cachedTokens() != null) {
                b.workerCachedTokens = t.cachedTokens();
                b.handoffUsed = t.handoffUsed();
            }
        } else if (event instanceof RequestEvent.Migrated m) {
            List<String> ex = new ArrayList<>(excluded);
            ex.add(m.failedWorker());
            b.excluded = List.copyOf(ex);
            b.migrations = migrations + 1;
        } else if (event instanceof RequestEvent.Finished f) {
            b.attemptFinished = f.last();
        } else if (event instanceof RequestEvent.ResponseStarted) {
            b.responseStarted = true;
        } else if (event instanceof RequestEvent.Responded r) {
            b.finishReason = r.finishReason();
        } else if (event instanceof RequestEvent.StreamedError e) {
            b.streamedError = e.error();
        } else if (event instanceof RequestEvent.Abandoned) {
            b.abandoned = true;
        }
        return b.build();
    }

    public int generatedCount() {
        return generated.length();
    }

    /** The prompt followed by every token generated so far. */
    public int[] context(int[] prompt) {
        return generated.after(prompt);
    }

    /**
     * The prefill worker whose KV handoff a decode worker used; empty when there was none, its
     * Prefill failed, or the decode worker refused the handoff and prefilled itself. Known from the
     * first chunk on (workers set {@code handoff_used} on every chunk).
     */
    public String prefillWorker() {
        return handoffSeen ? prefillWorkerTried : "";
    }

    /** The worker to name in a stream's headers: the first token's, else the current one. */
    public String streamWorker() {
        return firstWorker.isEmpty() ? worker : firstWorker;
    }

    /**
     * Prompt tokens found in a KV cache, capped at the prompt length: the prefill worker's count when
     * the decode worker used its handoff, else the last worker's (0 when no worker reported usage).
     */
    public int cachedTokens(int promptTokens) {
        int cached = handoffUsed && !prefillWorkerTried.isEmpty() ? prefillCachedTokens : workerCachedTokens;
        return Math.min(cached, promptTokens);
    }

    /**
     * How the last routing's predicted overlap compared with the worker's cached tokens; empty unless the
     * worker was chosen KV-aware, reported usage, and served without a prefill worker's handoff (whose
     * cached tokens are the prefill worker's, not the routed one's).
     */
    public java.util.Optional<OverlapPrediction.Result> overlapResult(int blockSize) {
        if (predicted == null || !OverlapPrediction.predicts(mode) || (handoffUsed && !prefillWorkerTried.isEmpty())) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(predicted.judge(workerCachedTokens, blockSize));
    }

    private static final class Builder {
        final Instant arrived;
        TokenLog generated;
        List<String> excluded;
        String worker;
        String firstWorker;
        RoutingMode mode;
        OverlapPrediction predicted;
        int migrations;
        Instant firstTokenAt;
        Instant lastTokenAt;
        String prefillWorkerTried;
        int prefillCachedTokens;
        int workerCachedTokens;
        boolean handoffUsed;
        boolean handoffSeen;
        boolean attemptFinished;
        Duration queueWait;
        String finishReason;
        ApiError streamedError;
        boolean responseStarted;
        boolean abandoned;
        RequestIntake intake;

        Builder(RequestResult r) {
            arrived = r.arrived;
            generated = r.generated;
            excluded = r.excluded;
            worker = r.worker;
            firstWorker = r.firstWorker;
            mode = r.mode;
            predicted = r.predicted;
            migrations = r.migrations;
            firstTokenAt = r.firstTokenAt;
            lastTokenAt = r.lastTokenAt;
            prefillWorkerTried = r.prefillWorkerTried;
            prefillCachedTokens = r.prefillCachedTokens;
            workerCachedTokens = r.workerCachedTokens;
            handoffUsed = r.handoffUsed;
            handoffSeen = r.handoffSeen;
            attemptFinished = r.attemptFinished;
            queueWait = r.queueWait;
            finishReason = r.finishReason;
            streamedError = r.streamedError;
            responseStarted = r.responseStarted;
            abandoned = r.abandoned;
            intake = r.intake;
        }

        RequestResult build() {
            return new RequestResult(arrived, generated, excluded, worker, firstWorker, mode, predicted, migrations, firstTokenAt,
                    lastTokenAt, prefillWorkerTried, prefillCachedTokens, workerCachedTokens, handoffUsed, handoffSeen,
                    attemptFinished, queueWait, finishReason, streamedError, responseStarted, abandoned, intake);
        }
    }
}
