package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.worker.agent.WorkerIdentity;
import io.flotilla.worker.engine.EngineRequest;

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

    static EngineRequest of(GenerateRequest r) {
        return of(r.getRequestId(), r.getTokenIdsList(), r.getStop().getMaxTokens(), r.getStop(), r.getSampling(),
                r.getDeadlineMs());
    }

    /** The prefill as an engine request; its max tokens are irrelevant (one token is produced). */
    static EngineRequest of(PrefillRequest r) {
        return of(r.getRequestId(), r.getTokenIdsList(), 1, r.getStop(), r.getSampling(), r.getDeadlineMs());
    }

    private static EngineRequest of(String id, List<Integer> tokenIds, int maxTokens, StopConditions stop,
                                    SamplingParams sampling, long deadlineMs) {
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
                seed, deadline);
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
