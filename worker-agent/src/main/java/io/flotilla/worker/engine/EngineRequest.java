package io.flotilla.worker.engine;

import io.flotilla.protocol.hash.KvScope;

import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;

/**
 * One generation request as the engine sees it: token ids in, a token budget and stop rules.
 * The record only normalises nulls and copies arrays; the engine validates values on submit and
 * reports problems as {@link InvalidRequestException}. Callers must not modify the arrays returned
 * by the accessors.
 *
 * @param requestId    unique among the engine's in-flight requests
 * @param promptTokens prompt token ids (after a migration: prompt plus tokens already sent)
 * @param maxTokens    most tokens to generate, at least 1
 * @param stopTokenIds token ids that end generation (the stop token is returned and counted)
 * @param ignoreEos    when true the engine's end-of-sequence token never ends generation
 * @param temperature  sampling temperature, 0 for greedy; null when the client left it to the model's default
 * @param seed         sampling seed, or null for none
 * @param deadline     when the request is abandoned with {@link DeadlineExceededException}, or null
 * @param options      every other sampling parameter ({@link SamplingOptions#DEFAULT}: none)
 * @param scope        the LoRA adapter it runs on and the tenant scope of its KV ({@link KvScope#SHARED}: the
 *                     base model, shared): the engine hashes the request's blocks in it and keeps them apart
 *                     from every other scope's
 */
public record EngineRequest(String requestId, int[] promptTokens, int maxTokens, int[] stopTokenIds,
                            boolean ignoreEos, Double temperature, Long seed, Instant deadline,
                            SamplingOptions options, KvScope scope) {

    private static final int[] NONE = new int[0];

    public EngineRequest {
        Objects.requireNonNull(requestId, "requestId");
        promptTokens = promptTokens == null ? NONE : promptTokens.clone();
        stopTokenIds = stopTokenIds == null ? NONE : stopTokenIds.clone();
        options = options == null ? SamplingOptions.DEFAULT : options;
        scope = scope == null ? KvScope.SHARED : scope;
    }

    public EngineRequest(String requestId, int[] promptTokens, int maxTokens, int[] stopTokenIds, boolean ignoreEos,
                         Double temperature, Long seed, Instant deadline) {
        this(requestId, promptTokens, maxTokens, stopTokenIds, ignoreEos, temperature, seed, deadline,
                SamplingOptions.DEFAULT, KvScope.SHARED);
    }

    /** A request of the base model whose KV is shared with every tenant. */
    public EngineRequest(String requestId, int[] promptTokens, int maxTokens, int[] stopTokenIds, boolean ignoreEos,
                         Double temperature, Long seed, Instant deadline, SamplingOptions options) {
        this(requestId, promptTokens, maxTokens, stopTokenIds, ignoreEos, temperature, seed, deadline, options,
                KvScope.SHARED);
    }

    /** A request without further sampling options, in {@code scope}. */
    public EngineRequest(String requestId, int[] promptTokens, int maxTokens, int[] stopTokenIds, boolean ignoreEos,
                         Double temperature, Long seed, Instant deadline, KvScope scope) {
        this(requestId, promptTokens, maxTokens, stopTokenIds, ignoreEos, temperature, seed, deadline,
                SamplingOptions.DEFAULT, scope);
    }

    /** A greedy request without stop tokens, seed or deadline. */
    public static EngineRequest of(String requestId, int[] promptTokens, int maxTokens) {
        return new EngineRequest(requestId, promptTokens, maxTokens, NONE, false, 0.0, null, null);
    }

    public EngineRequest withSeed(Long newSeed) {
        return new EngineRequest(requestId, promptTokens, maxTokens, stopTokenIds, ignoreEos, temperature,
                newSeed, deadline, options, scope);
    }

    public EngineRequest withStop(int[] newStopTokenIds, boolean newIgnoreEos) {
        return new EngineRequest(requestId, promptTokens, maxTokens, newStopTokenIds, newIgnoreEos,
                temperature, seed, deadline, options, scope);
    }

    /** The temperature to sample at: the client's, else {@code modelDefault} (what the engine's model prescribes). */
    public double temperatureOr(double modelDefault) {
        return temperature == null ? modelDefault : temperature;
    }

    public EngineRequest withTemperature(Double newTemperature) {
        return new EngineRequest(requestId, promptTokens, maxTokens, stopTokenIds, ignoreEos, newTemperature,
                seed, deadline, options, scope);
    }

    public EngineRequest withDeadline(Instant newDeadline) {
        return new EngineRequest(requestId, promptTokens, maxTokens, stopTokenIds, ignoreEos, temperature,
                seed, newDeadline, options, scope);
    }

    public EngineRequest withOptions(SamplingOptions newOptions) {
        return new EngineRequest(requestId, promptTokens, maxTokens, stopTokenIds, ignoreEos, temperature,
                seed, deadline, newOptions, scope);
    }

    public EngineRequest withScope(KvScope newScope) {
        return new EngineRequest(requestId, promptTokens, maxTokens, stopTokenIds, ignoreEos, temperature,
                seed, deadline, options, newScope);
    }

    /** The same request under another id (a further choice of an {@code n > 1} request). */
    public EngineRequest withRequestId(String newRequestId) {
        return new EngineRequest(newRequestId, promptTokens, maxTokens, stopTokenIds, ignoreEos, temperature,
                seed, deadline, options, scope);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EngineRequest r && requestId.equals(r.requestId)
                && Arrays.equals(promptTokens, r.promptTokens) && maxTokens == r.maxTokens
                && Arrays.equals(stopTokenIds, r.stopTokenIds) && ignoreEos == r.ignoreEos
                && Double.compare(temperature, r.temperature) == 0 && Objects.equals(seed, r.seed)
                && Objects.equals(deadline, r.deadline) && options.equals(r.options) && scope.equals(r.scope);
    }

    @Override
    public int hashCode() {
        return Objects.hash(requestId, Arrays.hashCode(promptTokens), maxTokens, Arrays.hashCode(stopTokenIds),
                ignoreEos, temperature, seed, deadline, options, scope);
    }

    @Override
    public String toString() {
        return "EngineRequest[" + requestId + ", prompt=" + promptTokens.length + " tokens, maxTokens=" + maxTokens
                + ", stop=" + Arrays.toString(stopTokenIds) + ", ignoreEos=" + ignoreEos + ", temperature="
                + temperature + ", seed=" + seed + ", deadline=" + deadline
                + (options.equals(SamplingOptions.DEFAULT) ? "" : ", " + options)
                + (scope.equals(KvScope.SHARED) ? "" : ", " + scope) + "]";
    }
}
