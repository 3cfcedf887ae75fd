package io.flotilla.router.epp;

import io.flotilla.gateway.tokenize.ModelTokenization;
import io.flotilla.gateway.tokenize.ModelTokenizations;
import io.flotilla.gateway.tokenize.TemplateRejectedException;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.hash.ScopedHasher;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.router.service.RequestRouter;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Picks the endpoint of one request from its headers and body with the router's own request path: the
 * prompt is tokenized with the model's tokenizer and hashed in the namespace its workers register, exactly
 * as the gateway does, then {@link RequestRouter#route} decides and books (KV overlap, load, LoRA adapters,
 * eligibility) as it does for {@code Route}. Knows nothing of Envoy's messages ({@link ExtProcStream} does).
 *
 * <p>What is answered when nothing is picked:
 * <pre>
 * body not an OpenAI request                      400 (both failure modes: the client's error)
 * subset hint that names no live worker            503 (the protocol's rule, both modes)
 * no live worker serves the model / tokenizer fails FailClose 503, FailOpen: through without a destination
 * every worker busy, sheddable objective (p &lt; 0)  429 with Retry-After (both modes)
 * every worker busy, other objectives             FailClose 429 with Retry-After, FailOpen: through
 * </pre>
 */
public final class EndpointPicker {

    /** The request headers the picker reads (lower case, as HTTP/2 and Envoy give them). */
    public static final String REQUEST_ID = "x-request-id";
    public static final String OBJECTIVE = "x-gateway-inference-objective";
    public static final String FAIRNESS_ID = "x-gateway-inference-fairness-id";

    private final RequestRouter router;
    private final ModelTokenizations tokenizations;
    private final EppSettings settings;
    private final AtomicInteger turn = new AtomicInteger();

    public EndpointPicker(RequestRouter router, ModelTokenizations tokenizations, EppSettings settings) {
        this.router = router;
        this.tokenizations = tokenizations;
        this.settings = settings;
    }

    /**
     * Decides for one request and hands the answer to {@code done}: at once, or on the indexer channel's
     * thread once the overlap is known. {@code body} is null for a request without one.
     *
     * @param subset the endpoints the proxy allows ({@code envoy.lb.subset_hint}); empty for the whole pool
     */
    public void pick(Map<String, String> headers, byte[] body, List<String> subset, Consumer<Pick> done) {
        List<WorkerInfo> workers = router.listWorkers().getWorkersList().stream()
                .filter(w -> w.getRoutable() && w.getRole() != WorkerRole.WORKER_ROLE_PREFILL)
                .filter(w -> subset.isEmpty() || subset.contains(endpoint(w)))
                .toList();
        if (!subset.isEmpty() && workers.isEmpty()) {
            done.accept(new Pick.Refused(503, "no_endpoint", "no live worker among the endpoints " + subset, 0));
            return;
        }
        if (body == null) {
            done.accept(workers.isEmpty() ? cannotPick("no live worker")
                    : new Pick.Unbooked(endpoint(workers.get(Math.floorMod(turn.getAndIncrement(), workers.size())))));
            return;
        }
        OpenAiBody request;
        try {
            request = OpenAiBody.parse(body);
        } catch (OpenAiBody.Unreadable e) {
            done.accept(new Pick.Refused(400, "invalid_request_error", e.getMessage(), 0));
            return;
        }
        String requested = request.model();
        Optional<WorkerInfo> base = workers.stream().filter(w -> w.getModel().equals(requested)).findFirst();
        String lora = "";
        if (base.isEmpty()) {
            base = workers.stream().filter(w -> w.getAdaptersList().contains(requested)).findFirst();
            lora = requested;
        }
        if (base.isEmpty()) {
            done.accept(cannotPick("no live worker serves model '" + requested + "'"));
            return;
        }
        WorkerInfo namespace = base.get();
        String model = namespace.getModel();
        int[] prompt;
        try {
            prompt = prompt(request, model, namespace);
        } catch (TemplateRejectedException e) {
            done.accept(new Pick.Refused(400, "invalid_request_error", e.getMessage(), 0));
            return;
        } catch (RuntimeException e) {
            done.accept(cannotPick("model '" + model + "' cannot be tokenized here: " + e.getMessage()));
            return;
        }
        int blockSize = namespace.getBlockSize();
        String layout = namespace.getKvLayout().isBlank() ? KvNamespace.pagedLayout("bf16", blockSize) : namespace.getKvLayout();
        BlockHasher hasher = new BlockHasher(KvNamespace.of(model, tokenizations.of(model).tokenizer().id(), layout), blockSize);
        String requestId = headers.getOrDefault(REQUEST_ID, "");
        if (requestId.isBlank()) {
            requestId = UUID.randomUUID().toString();
        }
        int priority = settings.priority(headers.get(OBJECTIVE));
        RouteRequest.Builder route = RouteRequest.newBuilder()
                .setRequestId(requestId)
                .setModel(model)
                .setTenant(headers.getOrDefault(FAIRNESS_ID, ""))
                .setIsl(prompt.length)
                .setBlockSize(blockSize)
                .setOsl(request.maxTokens() != null ? Math.max(0, request.maxTokens()) : settings.defaultMaxTokens())
                .setLoraName(lora)
                .setAllowDisagg(false)
                .putHints("priority", Integer.toString(priority));
        for (long h : ScopedHasher.of(hasher, KvScope.lora(lora)).seqHashes(prompt)) {
            route.addSeqHashes(h);
        }
        if (!subset.isEmpty()) {
            router.listWorkers().getWorkersList().stream().filter(w -> !subset.contains(endpoint(w)))
                    .forEach(w -> route.addExclude(w.getWorkerId()));
        }
        String id = requestId;
        router.route(route.build(), decision -> done.accept(answer(id, decision, priority)));
    }

    /** The response has begun: the prompt is processed (bookings move from prefill to decode). */
    public void prefillDone(String requestId) {
        router.prefillDone(requestId);
    }

    /** The request is over (its response ended, or the stream went): its booking is released. */
    public void release(String requestId) {
        router.release(requestId);
    }

    private int[] prompt(OpenAiBody request, String model, WorkerInfo worker) {
        tokenizations.reconcile(model, worker.getTokenizerId(), worker.getTokenizerSource()).ifPresent(problem -> {
            throw new IllegalStateException(problem);
        });
        ModelTokenization t = tokenizations.of(model);
        if (request.chat()) {
            return t.chatPrompt(request.messages(), request.tools());
        }
        return request.text() != null ? t.textPrompt(request.text()) : request.tokenIds();
    }

    private Pick answer(String requestId, RouteDecision d, int priority) {
        if (!d.getWorkerId().isEmpty()) {
            Map<String, String> endpoints = new java.util.HashMap<>();
            router.listWorkers().getWorkersList().forEach(w -> endpoints.put(w.getWorkerId(), endpoint(w)));
            List<String> list = new ArrayList<>();
            list.add(endpoints.getOrDefault(d.getWorkerId(), endpoint(d.getWorkerEndpoint())));
            d.getScoresMap().entrySet().stream()
                    .filter(e -> !e.getKey().startsWith("prefill:") && !e.getKey().equals(d.getWorkerId())
                            && endpoints.containsKey(e.getKey()))
                    .sorted(Map.Entry.<String, Double>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                    .limit(settings.fallbacks())
                    .forEach(e -> list.add(endpoints.get(e.getKey())));
            return new Pick.Routed(requestId, d.getWorkerId(), list.stream().distinct().toList());
        }
        if (d.getBusy()) {
            if (priority < 0 || !settings.failOpen()) {
                return new Pick.Refused(429, "busy", "every worker of the model is busy", d.getRetryAfterMs());
            }
            return new Pick.PassThrough("every worker is busy");
        }
        return cannotPick("no eligible worker");
    }

    private Pick cannotPick(String why) {
        return settings.failOpen() ? new Pick.PassThrough(why) : new Pick.Refused(503, "no_endpoint", why, 0);
    }

    private String endpoint(WorkerInfo w) {
        return endpoint(w.getEndpoint());
    }

    /**
     * The model server's address on a worker's host: the host the worker registered (its pod IP on
     * Kubernetes, bracketed when IPv6) and the configured target port; 0 keeps the registered endpoint.
     */
    String endpoint(String registered) {
        if (settings.targetPort() == 0) {
            return registered;
        }
        int colon = registered.lastIndexOf(':');
        String host = colon < 0 || registered.endsWith("]") ? registered : registered.substring(0, colon);
        return host + ":" + settings.targetPort();
    }
}
