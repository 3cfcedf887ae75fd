package io.flotilla.gateway.api;

import io.flotilla.gateway.client.ModelCatalog;
import io.flotilla.gateway.client.ServedModel;
import io.flotilla.gateway.config.GatewayProperties;
import io.flotilla.gateway.flow.FlowController;
import io.flotilla.gateway.flow.FlowPolicy;
import io.flotilla.gateway.flow.FlowRequest;
import io.flotilla.gateway.generation.EmbeddingJob;
import io.flotilla.gateway.generation.EmbeddingPipeline;
import io.flotilla.gateway.generation.ModelProfiles;
import io.flotilla.gateway.generation.RequestAccounting;
import io.flotilla.gateway.generation.RequestContext;
import io.flotilla.gateway.generation.RequestEvent;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.EmbeddingsRequest;
import io.flotilla.gateway.tokenize.ModelTokenization;
import io.flotilla.protocol.v1.EmbedResponse;
import io.flotilla.protocol.v1.EmbeddingCapability;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.Principal;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

/**
 * {@code POST /v1/embeddings} in OpenAI's shape. Authentication, rate limits, tenancy (the key, else {@code user}),
 * priority and queueing are those of the generation endpoints; each input is tokenized with the model's tokenizer as
 * a completion prompt is, and the {@link EmbeddingPipeline} has one worker whose engine embeds compute every vector.
 * A model none of whose workers embeds is a 400 naming {@code model}; {@code dimensions} is honoured only where the
 * model's engines can shorten their vectors (Matryoshka), else a 400 naming it. Accounted under its endpoint like
 * every request ({@code flotilla_gateway_requests_total{endpoint="/v1/embeddings"}}), plus the inputs and tokens
 * embedded.
 */
@RestController
class EmbeddingsController {

    static final String ENDPOINT = "/v1/embeddings";
    /** Text up to this many characters is tokenized on the thread that read it; longer on the prepare scheduler. */
    private static final int INLINE_TEXT_CHARS = 4096;

    private final RequestBodies bodies;
    private final ModelCatalog catalog;
    private final ModelProfiles profiles;
    private final String defaultModel;
    private final FlowController flow;
    private final FlowPolicy policy;
    private final EmbeddingPipeline pipeline;
    private final RequestAccounting accounting;
    private final GatewayMetrics metrics;
    private final Scheduler prepare;
    private final JsonMapper json;
    private final Clock clock;

    EmbeddingsController(RequestBodies bodies, ModelCatalog catalog, ModelProfiles profiles, GatewayProperties properties,
                         FlowController flow, FlowPolicy policy, EmbeddingPipeline pipeline, RequestAccounting accounting,
                         GatewayMetrics metrics, Scheduler prepareScheduler, JsonMapper json, Clock clock) {
        this.bodies = bodies;
        this.catalog = catalog;
        this.profiles = profiles;
        this.defaultModel = properties.defaultModel();
        this.flow = flow;
        this.policy = policy;
        this.pipeline = pipeline;
        this.accounting = accounting;
        this.metrics = metrics;
        this.prepare = prepareScheduler;
        this.json = json;
        this.clock = clock;
    }

    @PostMapping(ENDPOINT)
    Mono<ResponseEntity<String>> embeddings(ServerWebExchange exchange) {
        RequestContext ctx = new RequestContext(UUID.randomUUID().toString().replace("-", ""), clock.instant(), ENDPOINT);
        long arrivedNanos = flow.nowNanos();
        HttpHeaders headers = exchange.getRequest().getHeaders();
        return bodies.readJson(exchange.getRequest())
                .map(EmbeddingsRequest::parse)
                .zipWith(exchange.getPrincipal().map(Principal::getName).defaultIfEmpty(""))
                .flatMap(t -> {
                    EmbeddingsRequest request = t.getT1();
                    String key = t.getT2();
                    String tenant = request.user() != null && !request.user().isBlank() ? request.user()
                            : key.isEmpty() ? "anonymous" : key;
                    String flowId = key.isEmpty() ? tenant : key; // a key's users share its fair share
                    String model = request.model() != null ? request.model() : defaultModel;
                    ctx.on(new RequestEvent.Identified(tenant, flowId,
                            policy.priority(flowId, headers.getFirst(ResponseHeaders.PRIORITY)), model));
                    Mono<ModelCatalog.ModelTarget> target = catalog.target(model);
                    if (textChars(request) > INLINE_TEXT_CHARS) {
                        target = target.publishOn(prepare);
                    }
                    return target.map(m -> job(request, m, ctx.requestId(), tenant))
                            .flatMap(job -> {
                                ctx.on(new RequestEvent.Resolved(job.model(), null));
                                ctx.on(new RequestEvent.Placed(flowRequest(ctx, job, flowId, arrivedNanos, headers)));
                                return pipeline.run(job, ctx).map(response -> {
                                    ResponseEntity<String> answer = ok(render(request, job, response));
                                    metrics.embedded(job.model(), job.inputs().size(), job.promptTokens());
                                    ctx.on(new RequestEvent.Responded("stop")); // the whole answer is ready: an ok outcome
                                    return answer;
                                });
                            });
                })
                .doOnError(e -> ctx.on(new RequestEvent.Failed(e)))
                .transform(response -> accounting.endWhenDone(ctx, response));
    }

    private EmbeddingJob job(EmbeddingsRequest request, ModelCatalog.ModelTarget target, String requestId, String tenant) {
        ServedModel served = target.model();
        String model = served.name();
        if (!target.adapter().isEmpty()) {
            throw ApiError.unsupported("model", "Unsupported value: 'model' '" + target.adapter() + "' is a LoRA adapter "
                    + "of '" + model + "'; embeddings come from base models only.");
        }
        if (!served.capabilities().hasEmbedding()) {
            throw new ApiError(400, ApiError.INVALID_REQUEST, "model", "model_not_embedding", "The model '" + model
                    + "' cannot embed: none of the engines serving it has embeddings. Use a model served by an engine "
                    + "that embeds (an embedding or pooling model).", null);
        }
        EmbeddingCapability embedding = served.capabilities().getEmbedding();
        int dimensions = 0;
        if (request.dimensions() != null) {
            if (!embedding.getTruncatable()) {
                throw ApiError.unsupported("dimensions", "Unsupported parameter: 'dimensions': the embeddings of '" + model
                        + "' have " + embedding.getDimensions() + " dimensions and its model is not trained to be "
                        + "shortened (Matryoshka); leave 'dimensions' out.");
            }
            if (request.dimensions() > embedding.getDimensions()) {
                throw ApiError.invalid("dimensions", "Invalid 'dimensions': " + request.dimensions() + " is more than the "
                        + embedding.getDimensions() + " dimensions of the embeddings of '" + model + "'.");
            }
            dimensions = request.dimensions();
        }
        ModelTokenization tokenization = profiles.tokenization(model);
        int vocab = tokenization.tokenizer().vocabSize();
        int context = profiles.maxContext(model);
        List<int[]> inputs = new ArrayList<>(request.inputs());
        for (int i = 0; i < request.inputs(); i++) {
            int[] ids;
            if (request.texts() != null) {
                ids = tokenization.textPrompt(request.texts().get(i));
            } else {
                ids = request.tokens().get(i);
                for (int k = 0; k < ids.length; k++) {
                    if (ids[k] >= vocab) {
                        throw ApiError.invalid("input", "Invalid 'input" + where(request, i) + "[" + k + "]': token id "
                                + ids[k] + " is outside the vocabulary of '" + model + "' [0, " + vocab + ").");
                    }
                }
            }
            if (ids.length > context) {
                throw new ApiError(400, ApiError.INVALID_REQUEST, "input", "context_length_exceeded", "This model's "
                        + "maximum context length is " + context + " tokens, however you requested " + ids.length
                        + " tokens in 'input" + where(request, i) + "'. Please reduce your input.", null);
            }
            inputs.add(ids);
        }
        return new EmbeddingJob(requestId, model, tenant, served.blockSize(), inputs, dimensions);
    }

    private static String where(EmbeddingsRequest request, int i) {
        return request.inputs() == 1 && request.texts() == null ? "" : "[" + i + "]";
    }

    private static long textChars(EmbeddingsRequest request) {
        long chars = 0;
        if (request.texts() != null) {
            for (String t : request.texts()) {
                chars += t.length();
            }
        }
        return chars;
    }

    /** Its deadline counts from arrival; its cost is its tokens (all of them computed: no prefix is reused). */
    private FlowRequest flowRequest(RequestContext ctx, EmbeddingJob job, String flowId, long arrivedNanos,
                                    HttpHeaders headers) {
        Duration timeout = policy.queueTimeout(headers.getFirst(ResponseHeaders.QUEUE_TIMEOUT),
                flow.limits(job.model()).queueTimeout(), headers.getFirst(ResponseHeaders.CLIENT_TIMEOUT));
        return new FlowRequest(ctx.requestId(), job.model(), ctx.priority(), flowId, job.promptTokens(),
                arrivedNanos + Math.min(timeout.toNanos(), Long.MAX_VALUE / 4));
    }

    private ObjectNode render(EmbeddingsRequest request, EmbeddingJob job, EmbedResponse response) {
        ObjectNode out = json.createObjectNode().put("object", "list");
        ArrayNode data = out.putArray("data");
        for (int i = 0; i < response.getEmbeddingsCount(); i++) {
            List<Float> values = response.getEmbeddings(i).getValuesList();
            ObjectNode item = data.addObject().put("object", "embedding").put("index", i);
            if (request.base64()) {
                item.put("embedding", base64(values));
            } else {
                ArrayNode vector = item.putArray("embedding");
                for (float v : values) {
                    vector.add(v);
                }
            }
        }
        out.put("model", job.model());
        out.putObject("usage").put("prompt_tokens", job.promptTokens()).put("total_tokens", job.promptTokens());
        return out;
    }

    /** OpenAI's {@code base64} encoding: the vector's float32 values, little-endian, in base64. */
    static String base64(List<Float> values) {
        ByteBuffer bytes = ByteBuffer.allocate(values.size() * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            bytes.putFloat(v);
        }
        return Base64.getEncoder().encodeToString(bytes.array());
    }

    private ResponseEntity<String> ok(ObjectNode body) {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(json.writeValueAsString(body));
    }
}
