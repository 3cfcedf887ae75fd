package io.flotilla.gateway.generation;

import io.flotilla.gateway.flow.FlowRequest;
import io.flotilla.gateway.flow.Priority;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.output.GenerationEvent;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.RoutingMode;
import io.flotilla.protocol.v1.TokenLogprobs;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What happened to one request, in order. {@link RequestResult#apply} folds these into the request's
 * immutable result; nothing else changes it. Attempt events come from the {@link GenerationPipeline}
 * (one attempt per worker the request ran on), intake and response events from the HTTP side.
 */
public sealed interface RequestEvent {

    /** What the HTTP side learned of the request before it ran ({@link RequestIntake}). */
    sealed interface Intake extends RequestEvent {
    }

    /** The body was read: who sent it, the flow it counts in, its band, and the model it names (not yet resolved). */
    record Identified(String tenant, String flow, Priority priority, String model) implements Intake {
    }

    /** A worker serves {@code model}, the request's model as resolved; {@code job} its generation (null: an embedding). */
    record Resolved(String model, GenerationJob job) implements Intake {

        public Resolved(GenerationJob job) {
            this(job.model(), job);
        }
    }

    /** The request as flow control sees it. */
    record Placed(FlowRequest request) implements Intake {
    }

    /** Hints for the router ({@link RequestIntake#routeHints}). */
    record Hinted(Map<String, String> hints) implements Intake {
    }

    /** The error that ended the request before its response started. */
    record Failed(Throwable error) implements Intake {
    }

    /** Attempt events, which the pipeline emits downstream as well. */
    sealed interface Attempt extends RequestEvent, GenerationEvent {
    }

    /** Flow control dispatched the request after it waited {@code waited}. */
    record Dispatched(Duration waited) implements RequestEvent {
    }

    /**
     * A worker was chosen: by a router ({@code router ≥ 0}) or by the gateway itself; {@code predicted} is the
     * route's overlap for it and the context routed.
     */
    record Routed(String worker, RoutingMode mode, int router, OverlapPrediction predicted) implements Attempt {

        public Routed(String worker, RoutingMode mode, int router) {
            this(worker, mode, router, new OverlapPrediction(0, 0));
        }
    }

    /** A prefill worker prefilled the prompt and handed the KV over. */
    record Prefilled(String prefillWorker, int cachedTokens) implements Attempt {
    }

    /**
     * One worker chunk of choice {@code choice} (0 unless the request asked for n &gt; 1): newly generated
     * token ids (maybe none) at {@code at}, with their log-probabilities when the request asked for them;
     * {@code handoffUsed} as the chunk says; {@code cachedTokens} from its usage, or null when it had none.
     */
    record Tokens(int choice, int[] ids, List<TokenLogprobs> logprobs, Instant at, boolean handoffUsed,
                  Integer cachedTokens) implements Attempt, GenerationEvent.Tokens {

        public Tokens(int[] ids, Instant at, boolean handoffUsed, Integer cachedTokens) {
            this(0, ids, List.of(), at, handoffUsed, cachedTokens);
        }
    }

    /** The worker's stream failed; the request moves on without {@code failedWorker}. */
    record Migrated(String failedWorker) implements Attempt {
    }

    /**
     * Choice {@code choice} ended normally: {@code LENGTH} (max tokens) or {@code STOP} (eos, a stop token or
     * a stop string); {@code last} when it was the attempt's last choice to end.
     */
    record Finished(int choice, FinishReason reason, boolean last) implements Attempt, GenerationEvent.Finished {

        public Finished(FinishReason reason) {
            this(0, reason, true);
        }
    }

    /** The first byte of the response body is about to be written. */
    record ResponseStarted() implements RequestEvent {
    }

    /** The client received the end of the output ({@code stop} or {@code length}). */
    record Responded(String finishReason) implements RequestEvent {
    }

    /** An error was sent inside an already started stream. */
    record StreamedError(ApiError error) implements RequestEvent {
    }

    /** The client went away before the end. */
    record Abandoned() implements RequestEvent {
    }
}
