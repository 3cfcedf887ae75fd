package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.worker.engine.DeadlineExceededException;
import io.flotilla.worker.engine.EmbeddingSupport;
import io.flotilla.worker.engine.EngineFeature;
import io.flotilla.worker.engine.EngineException;
import io.flotilla.worker.engine.EngineKvTransfer;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.RemotePrefill;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.TokenSink;
import reactor.core.publisher.Mono;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * An {@link io.flotilla.worker.engine.Engine} in front of a vLLM server (or any server with vLLM's
 * OpenAI-compatible API): {@code POST /v1/completions} with the token-id prompt, streamed
 * ({@link CompletionBody}, {@link CompletionChunk}), and vLLM's {@code kv_transfer_params} protocol for
 * disaggregated prefill/decode. Capacity is {@code num_gpu_blocks} of {@code vllm:cache_config_info}.
 * Everything engine-independent is {@link RemoteEngine}'s.
 */
public final class OpenAiHttpEngine extends RemoteEngine implements EngineKvTransfer {

    /** The engine's pooling model, passed through; null when it serves none. */
    private final PooledEmbeddings embeddings;

    private OpenAiHttpEngine(OpenAiEngineSettings settings, LoraSettings lora, Pooling pooling, BlockHasher hasher,
                             Clock clock, EngineListeners listeners, String name) {
        super(settings, lora, hasher, clock, listeners, name);
        this.embeddings = pooling == null ? null : new PooledEmbeddings(pooling.dimensions(), pooling.truncatable(),
                settings.servedModel(), http, inFlight::refuseIfDraining);
    }

    /**
     * The engine serves a pooling model with {@code POST /v1/embeddings}: vectors of {@code dimensions} floats,
     * shortened on request when {@code truncatable} (Matryoshka).
     */
    public record Pooling(int dimensions, boolean truncatable) {
    }

    /** An adapter for the engine server {@code settings} names, scraping it (and reading its KV events) from now on. */
    public static OpenAiHttpEngine start(OpenAiEngineSettings settings, BlockHasher hasher, Clock clock,
                                         EngineListeners listeners, String name) {
        return start(settings, LoraSettings.NONE, hasher, clock, listeners, name);
    }

    /** As {@link #start(OpenAiEngineSettings, BlockHasher, Clock, EngineListeners, String)}, loading LoRA adapters as {@code lora} says. */
    public static OpenAiHttpEngine start(OpenAiEngineSettings settings, LoraSettings lora, BlockHasher hasher, Clock clock,
                                         EngineListeners listeners, String name) {
        return start(settings, lora, null, hasher, clock, listeners, name);
    }

    /** As above, with the engine's embeddings passed through when {@code pooling} is not null. */
    public static OpenAiHttpEngine start(OpenAiEngineSettings settings, LoraSettings lora, Pooling pooling,
                                         BlockHasher hasher, Clock clock, EngineListeners listeners, String name) {
        OpenAiHttpEngine engine = new OpenAiHttpEngine(settings, lora, pooling, hasher, clock, listeners, name);
        engine.startScraping();
        return engine;
    }

    /** {@link EmbeddingSupport} when the engine serves a pooling model ({@link Pooling}), else the remote engine's features. */
    @Override
    public <F extends EngineFeature> Optional<F> feature(Class<F> type) {
        if (type == EmbeddingSupport.class) {
            return Optional.ofNullable(embeddings).map(type::cast);
        }
        return super.feature(type);
    }

    /**
     * vLLM's {@code cache_salt} enters the first block's hash and every later block chains from it, so a
     * salted request shares no block with another salt, public prefixes included; its KV events name the salt
     * in the first block's {@code extra_keys}. An engine whose events carry no {@code extra_keys} (older vLLM)
     * cannot show which salt a block has, so salted requests are refused from the first such event on.
     */
    @Override
    public TenantIsolation tenantIsolation() {
        return kvEventsShowSalts() ? TenantIsolation.TENANT_ISOLATION_SALT_ALL_BLOCKS : TenantIsolation.TENANT_ISOLATION_NONE;
    }

    @Override
    protected String generatePath() {
        return "/v1/completions";
    }

    @Override
    protected String streamBody(EngineRequest request, String kvTransferParams) {
        return CompletionBody.stream(settings.servedModel(), request, settings.returnTokenIds(), kvTransferParams);
    }

    @Override
    protected ChunkDecoder decoder(EngineRequest request) {
        return ChunkDecoder.OPENAI;
    }

    /**
     * Like {@link #submit} for the decode side of a disaggregated request: {@code kvTransferParams}
     * (a JSON object, from the prefill engine's {@link RemotePrefill#kvTransferParams()}) goes into the
     * request as {@code kv_transfer_params}, so the engine pulls the prompt's KV instead of computing it.
     * Null behaves like {@link #submit}.
     *
     * @throws InvalidRequestException also when {@code kvTransferParams} is not a JSON object
     */
    @Override
    public RequestHandle submitWithKvTransfer(EngineRequest request, String kvTransferParams, TokenSink sink) {
        return submit(request, kvTransferParams, sink);
    }

    /**
     * Runs the prefill of {@code request} on this engine for a decode on another engine (vLLM
     * {@code kv_transfer_params} protocol: {@code do_remote_decode}, {@code max_tokens: 1}, not
     * streamed). The engine keeps the prompt's KV for the decode engine to pull.
     *
     * @return completes with the engine's {@code kv_transfer_params}, or exceptionally with an
     *         {@link EngineException} (also when the engine returns no params: it was started without
     *         a KV connector); cancelling the future closes the HTTP request
     */
    @Override
    public CompletableFuture<RemotePrefill> prefillRemote(EngineRequest request) {
        CompletionBody.validate(request);
        inFlight.refuseIfDraining();
        String body = CompletionBody.remotePrefill(settings.servedModel(), request, settings.returnTokenIds());
        Mono<RemotePrefill> result = withAdapter(request, http.call(generatePath(), body, request.requestId())
                .map(OpenAiHttpEngine::remotePrefill));
        if (request.deadline() != null) {
            Duration left = Duration.between(clock.instant(), request.deadline());
            if (left.isNegative() || left.isZero()) {
                return CompletableFuture.failedFuture(new DeadlineExceededException("deadline passed before the prefill was sent"));
            }
            result = result.timeout(left, Mono.error(() -> new DeadlineExceededException("deadline passed during remote prefill")));
        }
        return result.onErrorMap(e -> !(e instanceof EngineException), EngineHttpErrors::forFailure).toFuture();
    }

    /** Reads the engine's non-streamed prefill response; throws an {@code EngineException} for errors or missing params. */
    static RemotePrefill remotePrefill(String json) {
        CompletionChunk c = CompletionChunk.parse(json);
        if (c.error() != null) {
            throw c.error();
        }
        if (c.kvTransferParams() == null) {
            throw new EngineUnavailableException("engine returned no kv_transfer_params; is it started with --kv-transfer-config?");
        }
        CompletionChunk.Usage u = c.usage() == null ? new CompletionChunk.Usage(0, 0, 0) : c.usage();
        return new RemotePrefill(c.kvTransferParams(), c.tokenIds() == null ? new int[0] : c.tokenIds(),
                u.promptTokens(), u.cachedTokens());
    }

    /** What vLLM's and SGLang's completions endpoints honour ({@link CompletionBody#CAPABILITIES}). */
    @Override
    public io.flotilla.protocol.v1.EngineCapabilities capabilities() {
        return CompletionBody.CAPABILITIES;
    }

}
