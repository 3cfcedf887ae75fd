package io.flotilla.worker.api;

import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.v1.CacheScope;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.worker.agent.WorkerIdentity;
import io.flotilla.worker.engine.EngineRequest;
import io.grpc.Status;

import java.time.Instant;
import java.util.List;

/** Validation of WorkerService requests and their translation to {@link EngineRequest}s. Pure. */
final class EngineRequests {

    private EngineRequests() {
    }

    /** What is wrong with a Generate request, or null. */
    static String invalid(GenerateRequest r, WorkerIdentity self) {
        String common = invalid(r.getRequestId(), r.getModel(), r.getTokenIdsCount(), r.getSampling(), self);
        if (common != null) {
            return common;
        }
        if (!r.hasStop()) {
            return "stop conditions with max_tokens are required";
        }
        if (r.getStop().getMaxTokens() == 0) {
            return "stop.max_tokens must be at least 1";
        }
        return null;
    }

    /** What is wrong with a Prefill request, or null. */
    static String invalid(PrefillRequest r, WorkerIdentity self) {
        return invalid(r.getRequestId(), r.getModel(), r.getTokenIdsCount(), r.getSampling(), self);
    }

    private static String invalid(String requestId, String model, int tokens, SamplingParams sampling, WorkerIdentity self) {
        if (requestId.isBlank()) {
            return "request_id is required";
        }
        if (!model.isEmpty() && !model.equals(self.model())) {
            return "model '" + model + "' is not served by " + self.id() + " (it serves '" + self.model() + "')";
        }
        if (tokens == 0) {
            return "token_ids must not be empty";
        }
        if (sampling.getTemperature() < 0 || Float.isNaN(sampling.getTemperature())) {
            return "sampling.temperature must be >= 0";
        }
        return null;
    }

    /** Longest tenant salt accepted (gateways send "fs1:" and 32 hex digits). */
    static final int MAX_SALT_CHARS = 128;

    /**
     * Why this worker refuses a request's cache scope, or null: a tenant salt its engine cannot honour
     * ({@code FAILED_PRECONDITION}: serving it would share the tenant's KV) or a malformed salt
     * ({@code INVALID_ARGUMENT}). On an engine that salts every block (vLLM) the public prefix is private to
     * the tenant too: more isolation than asked, never less, so the request is served (and counted). Unknown
     * adapters are the engine's to refuse at submit.
     */
    static Status refusal(CacheScope scope, TenantIsolation isolation) {
        String salt = scope.getTenantSalt();
        if (salt.isEmpty()) {
            return null;
        }
        if (salt.length() > MAX_SALT_CHARS || !salt.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            return Status.INVALID_ARGUMENT.withDescription("cache_scope.tenant_salt must be at most " + MAX_SALT_CHARS
                    + " printable ASCII characters");
        }
        return switch (isolation) {
            case TENANT_ISOLATION_SALT_AFTER_PUBLIC_PREFIX, TENANT_ISOLATION_SALT_ALL_BLOCKS -> null;
            default -> Status.FAILED_PRECONDITION.withDescription("this worker's engine cannot keep tenants' KV apart "
                    + "(no cache salt it honours and reports in its KV events); it refuses tenant-salted requests rather "
                    + "than share their prefixes: serve the model with prefix-sharing global, or on vLLM or simulated workers");
        };
    }

    static KvScope scope(CacheScope s) {
        return new KvScope(s.getLoraName(), s.getTenantSalt(), s.getPublicBlocks());
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
        Long seed = sampling.getHasSeed() ? sampling.getSeed() : null;
        Instant deadline = deadlineMs > 0 ? Instant.ofEpochMilli(deadlineMs) : null;
        return new EngineRequest(id, tokens, Math.max(1, maxTokens), stops, stop.getIgnoreEos(), sampling.getTemperature(),
                seed, deadline, scope);
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
