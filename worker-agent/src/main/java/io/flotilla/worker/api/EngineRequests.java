package io.flotilla.worker.api;

import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.v1.CacheScope;
import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.SamplingFeature;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.SamplingOptions;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Validation of WorkerService requests and their translation to {@link EngineRequest}s. Pure. A
 * sampling parameter the engine does not advertise in its capabilities is refused by name, never
 * dropped (the gateway checks the same before routing; this is the worker's own guard).
 */
final class EngineRequests {

    /** Most choices of one Generate. */
    static final int MAX_N = 128;

    private EngineRequests() {
    }

    /** What is wrong with a Generate request, or null. */
    static String invalid(GenerateRequest r, WorkerIdentity self, EngineCapabilities capabilities) {
        String common = invalid(r.getRequestId(), r.getModel(), r.getTokenIdsCount(), r.getSampling(), self, capabilities);
        if (common != null) {
            return common;
        }
        if (!r.hasStop()) {
            return "stop conditions with max_tokens are required";
        }
        if (r.getStop().getMaxTokens() == 0) {
            return "stop.max_tokens must be at least 1";
        }
        if (r.getN() > MAX_N) {
            return "n must be at most " + MAX_N + ", got " + r.getN();
        }
        if (r.getN() > 1 && r.hasHandoff()) {
            return "n > 1 cannot continue a KV handoff (the prompt of every choice is prefilled here)";
        }
        return null;
    }

    /** Most inputs of one Embed. */
    static final int MAX_EMBED_INPUTS = 2048;

    /** What is wrong with an Embed request before the engine sees it, or null. */
    static String invalid(io.flotilla.protocol.v1.EmbedRequest r, WorkerIdentity self,
                          io.flotilla.worker.engine.EmbeddingSupport support) {
        if (r.getRequestId().isBlank()) {
            return "request_id is required";
        }
        if (!r.getModel().isEmpty() && !r.getModel().equals(self.model())) {
            return "model '" + r.getModel() + "' is not served by " + self.id() + " (it serves '" + self.model() + "')";
        }
        if (r.getInputsCount() == 0) {
            return "inputs must not be empty";
        }
        if (r.getInputsCount() > MAX_EMBED_INPUTS) {
            return "at most " + MAX_EMBED_INPUTS + " inputs, got " + r.getInputsCount();
        }
        for (int i = 0; i < r.getInputsCount(); i++) {
            if (r.getInputs(i).getTokenIdsCount() == 0) {
                return "input " + i + " has no token ids";
            }
        }
        return io.flotilla.worker.engine.EmbeddingSupport.refusedDimensions(support, r.getDimensions());
    }

    /** What is wrong with a Prefill request, or null. */
    static String invalid(PrefillRequest r, WorkerIdentity self, EngineCapabilities capabilities) {
        return invalid(r.getRequestId(), r.getModel(), r.getTokenIdsCount(), r.getSampling(), self, capabilities);
    }

    private static String invalid(String requestId, String model, int tokens, SamplingParams sampling, WorkerIdentity self,
                                  EngineCapabilities capabilities) {
        if (requestId.isBlank()) {
            return "request_id is required";
        }
        if (!model.isEmpty() && !model.equals(self.model())) {
            return "model '" + model + "' is not served by " + self.id() + " (it serves '" + self.model() + "')";
        }
        if (tokens == 0) {
            return "token_ids must not be empty";
        }
        if (sampling.hasTemperature() && !(sampling.getTemperature() >= 0 && Double.isFinite(sampling.getTemperature()))) {
            return "sampling.temperature must be a finite number >= 0, got " + sampling.getTemperature();
        }
        String range = outOfRange(sampling);
        if (range != null) {
            return range;
        }
        return unsupported(options(sampling, StopConditions.getDefaultInstance()), capabilities, self);
    }

    private static String outOfRange(SamplingParams s) {
        if (s.hasTopP() && !(s.getTopP() > 0 && s.getTopP() <= 1)) {
            return "sampling.top_p must be in (0, 1], got " + s.getTopP();
        }
        if (s.hasTopK() && s.getTopK() < -1) {
            return "sampling.top_k must be -1, 0 (all tokens) or positive, got " + s.getTopK();
        }
        if (s.hasMinP() && !(s.getMinP() >= 0 && s.getMinP() <= 1)) {
            return "sampling.min_p must be in [0, 1], got " + s.getMinP();
        }
        if (s.hasRepetitionPenalty() && !(s.getRepetitionPenalty() > 0 && Double.isFinite(s.getRepetitionPenalty()))) {
            return "sampling.repetition_penalty must be a finite number > 0, got " + s.getRepetitionPenalty();
        }
        if (!Double.isFinite(s.getPresencePenalty()) || !Double.isFinite(s.getFrequencyPenalty())) {
            return "sampling penalties must be finite numbers";
        }
        for (Map.Entry<Integer, Double> e : s.getLogitBiasMap().entrySet()) {
            if (!(Math.abs(e.getValue()) <= 100)) {
                return "sampling.logit_bias of token " + Integer.toUnsignedString(e.getKey()) + " must be in [-100, 100], got "
                        + e.getValue();
            }
        }
        if (s.getTopLogprobs() > 0 && !s.getLogprobs()) {
            return "sampling.top_logprobs needs sampling.logprobs";
        }
        return null;
    }

    /** Longest tenant salt accepted (gateways send "fs1:" and 32 hex digits). */
    static final int MAX_SALT_CHARS = 128;

    /**
     * Why this worker refuses a request's cache scope, or null: a tenant salt its engine cannot honour
     * ({@code PRECONDITION}: serving it would share the tenant's KV) or a malformed salt
     * ({@code INVALID}). On an engine that salts every block (vLLM) the public prefix is private to
     * the tenant too: more isolation than asked, never less, so the request is served (and counted). Unknown
     * adapters are the engine's to refuse at submit.
     */
    static CallFailure refusal(CacheScope scope, TenantIsolation isolation) {
        String salt = scope.getTenantSalt();
        if (salt.isEmpty()) {
            return null;
        }
        if (salt.length() > MAX_SALT_CHARS || !salt.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            return CallFailure.of(CallFailure.Kind.INVALID, "cache_scope.tenant_salt must be at most " + MAX_SALT_CHARS
                    + " printable ASCII characters");
        }
        return switch (isolation) {
            case TENANT_ISOLATION_SALT_AFTER_PUBLIC_PREFIX, TENANT_ISOLATION_SALT_ALL_BLOCKS -> null;
            default -> CallFailure.of(CallFailure.Kind.PRECONDITION, "this worker's engine cannot keep tenants' KV apart "
                    + "(no cache salt it honours and reports in its KV events); it refuses tenant-salted requests rather "
                    + "than share their prefixes: serve the model with prefix-sharing global, or on vLLM or simulated workers");
        };
    }

    static KvScope scope(CacheScope s) {
        return new KvScope(s.getLoraName(), s.getTenantSalt(), s.getPublicBlocks());
    }

    /** The first feature {@code options} need that {@code capabilities} lack, as an error, or null. */
    static String unsupported(SamplingOptions options, EngineCapabilities capabilities, WorkerIdentity self) {
        for (SamplingFeature f : options.featuresUsed()) {
            if (!capabilities.getFeaturesList().contains(f)) {
                return "sampling." + parameter(f) + " is not supported by the engine of " + self.id();
            }
        }
        if (options.topLogprobs() > capabilities.getMaxTopLogprobs()) {
            return "sampling.top_logprobs must be at most " + capabilities.getMaxTopLogprobs() + " on " + self.id()
                    + ", got " + options.topLogprobs();
        }
        return null;
    }

    /** The OpenAI / vLLM name of the parameter behind a feature. */
    static String parameter(SamplingFeature f) {
        return switch (f) {
            case SAMPLING_FEATURE_TOP_P -> "top_p";
            case SAMPLING_FEATURE_TOP_K -> "top_k";
            case SAMPLING_FEATURE_MIN_P -> "min_p";
            case SAMPLING_FEATURE_PRESENCE_PENALTY -> "presence_penalty";
            case SAMPLING_FEATURE_FREQUENCY_PENALTY -> "frequency_penalty";
            case SAMPLING_FEATURE_REPETITION_PENALTY -> "repetition_penalty";
            case SAMPLING_FEATURE_LOGIT_BIAS -> "logit_bias";
            case SAMPLING_FEATURE_LOGPROBS -> "logprobs";
            case SAMPLING_FEATURE_JSON_OBJECT, SAMPLING_FEATURE_JSON_SCHEMA -> "structured_output";
            default -> f.name();
        };
    }

    static EngineRequest of(GenerateRequest r) {
        return of(r.getRequestId(), r.getTokenIdsList(), r.getStop().getMaxTokens(), r.getStop(), r.getSampling(),
                r.getDeadlineMs(), scope(r.getCacheScope()));
    }

    /** The prefill as an engine request; its max tokens are irrelevant (one token is produced). */
    static EngineRequest of(PrefillRequest r) {
        return of(r.getRequestId(), r.getTokenIdsList(), 1, r.getStop(), r.getSampling(), r.getDeadlineMs(),
                scope(r.getCacheScope()));
    }

    private static EngineRequest of(String id, List<Integer> tokenIds, int maxTokens, StopConditions stop,
                                    SamplingParams sampling, long deadlineMs, KvScope scope) {
        int[] tokens = new int[tokenIds.size()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = tokenIds.get(i); // uint32 >= 2^31 arrive negative and are rejected by the engine
        }
        int[] stops = new int[stop.getStopTokenIdsCount()];
        for (int i = 0; i < stops.length; i++) {
            stops[i] = stop.getStopTokenIds(i);
        }
        Long seed = sampling.hasSeed() ? sampling.getSeed() : null;
        Instant deadline = deadlineMs > 0 ? Instant.ofEpochMilli(deadlineMs) : null;
        Double temperature = sampling.hasTemperature() ? sampling.getTemperature() : null;
        return new EngineRequest(id, tokens, Math.max(1, maxTokens), stops, stop.getIgnoreEos(), temperature,
                seed, deadline, options(sampling, stop), scope);
    }

    /** The contract's sampling fields as engine options: set where the client set them, null elsewhere. */
    static SamplingOptions options(SamplingParams s, StopConditions stop) {
        SamplingOptions.OutputFormat format = switch (s.getStructuredOutput().getFormatCase()) {
            case JSON_OBJECT -> new SamplingOptions.OutputFormat(SamplingOptions.OutputFormat.Kind.JSON_OBJECT, "",
                    s.getStructuredOutput().getSchemaName());
            case JSON_SCHEMA -> new SamplingOptions.OutputFormat(SamplingOptions.OutputFormat.Kind.JSON_SCHEMA,
                    s.getStructuredOutput().getJsonSchema(), s.getStructuredOutput().getSchemaName());
            default -> SamplingOptions.OutputFormat.FREE;
        };
        return new SamplingOptions(s.hasTopP() ? s.getTopP() : null, s.hasTopK() ? s.getTopK() : null,
                s.hasMinP() ? s.getMinP() : null, s.hasPresencePenalty() ? s.getPresencePenalty() : null,
                s.hasFrequencyPenalty() ? s.getFrequencyPenalty() : null,
                s.hasRepetitionPenalty() ? s.getRepetitionPenalty() : null,
                s.getLogitBiasMap(), s.getLogprobs(), s.getTopLogprobs(), format, stop.getStopStringsList());
    }

    /** Prompt token ids as ints. */
    static int[] prompt(GenerateRequest r) {
        int[] tokens = new int[r.getTokenIdsCount()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = r.getTokenIds(i);
        }
        return tokens;
    }
}
