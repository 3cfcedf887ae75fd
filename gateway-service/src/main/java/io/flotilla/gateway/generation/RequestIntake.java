package io.flotilla.gateway.generation;

import io.flotilla.gateway.flow.FlowRequest;
import io.flotilla.gateway.flow.Priority;

import java.util.Map;

/**
 * What the HTTP side learned of a request before it ran, part of its {@link RequestResult} and changed only by
 * the {@link RequestEvent.Intake} events ({@link #apply}).
 *
 * @param model        the model asked for; null before the body was read
 * @param modelServed  the catalog confirmed that a worker serves {@code model}
 * @param tenant       the request's tenant ({@code user}, else its API key id, else {@code anonymous})
 * @param flow         the flow its limits, fair share and per-tenant meters count it in: its API key id, else its tenant
 * @param priority     its band
 * @param job          the generation, once tokenized and its model resolved; null before, and for an embedding
 * @param promptHashes the prompt's block hashes, computed once with the job (cost estimate and first Route share
 *                     them); null without a job
 * @param flowRequest  the request as flow control sees it; null before it was placed
 * @param routeHints   what the endpoint knows that may help the router place it ({@code RouteRequest.hints}), e.g.
 *                     the worker that served the previous turn of a conversation; the router prices a hint, it never
 *                     obeys one
 * @param error        the error that ended the request before its response started, or null
 */
public record RequestIntake(String model, boolean modelServed, String tenant, String flow, Priority priority,
                            GenerationJob job, long[] promptHashes, FlowRequest flowRequest,
                            Map<String, String> routeHints, Throwable error) {

    static final RequestIntake NONE = new RequestIntake(null, false, "", "", Priority.STANDARD, null, null, null,
            Map.of(), null);

    RequestIntake apply(RequestEvent.Intake event) {
        if (event instanceof RequestEvent.Identified i) {
            return new RequestIntake(i.model(), false, i.tenant(), i.flow(), i.priority(), job, promptHashes,
                    flowRequest, routeHints, error);
        }
        if (event instanceof RequestEvent.Resolved r) {
            GenerationJob j = r.job();
            long[] hashes = j == null ? null
                    : j.promptHashes() != null ? j.promptHashes() : j.hasher().seqHashes(j.promptTokens());
            return new RequestIntake(r.model(), true, tenant, flow, priority, j, hashes, flowRequest, routeHints, error);
        }
        if (event instanceof RequestEvent.Placed p) {
            return new RequestIntake(model, modelServed, tenant, flow, priority, job, promptHashes, p.request(),
                    routeHints, error);
        }
        if (event instanceof RequestEvent.Hinted h) {
            return new RequestIntake(model, modelServed, tenant, flow, priority, job, promptHashes, flowRequest,
                    Map.copyOf(h.hints()), error);
        }
        RequestEvent.Failed f = (RequestEvent.Failed) event;
        return new RequestIntake(model, modelServed, tenant, flow, priority, job, promptHashes, flowRequest, routeHints,
                f.error());
    }
}
