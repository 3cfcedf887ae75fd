package io.flotilla.gateway.config;

import io.flotilla.gateway.flow.FlowLimits;
import io.flotilla.gateway.generation.GenerationSettings;
import io.flotilla.gateway.generation.PrefixSharing;
import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Gateway settings.
 *
 * @param routerAddress     the routers' RouterService: a comma-separated list of gRPC targets, each
 *                          {@code host:port} or {@code dns:///host:port} (one target resolving to every replica)
 * @param defaultModel      model used when a request names none
 * @param routeDeadline     the adaptive deadline of one {@code Route} attempt
 * @param routerCallTimeout deadline of the router's other calls (ListWorkers, Release, MarkPrefillDone,
 *                          ReportWorkerFailure)
 * @param prefillTimeout    deadline of one {@code Prefill} call on a prefill worker; past it the decode
 *                          worker prefills locally
 * @param streamIdleTimeout longest wait for the next chunk of a worker's token stream (the first one
 *                          included); past it the worker counts as failed and the request migrates
 * @param migrationLimit    most times one request moves to another worker after a worker failure
 * @param models            per-model settings by model name; models not listed use the defaults of {@link Model}
 * @param modelsCacheTtl    how long the worker list from {@code ListWorkers} (models, block sizes) is reused
 * @param maxRequestSize    largest accepted request body; larger ones get 413
 * @param maxHeaderSize     largest accepted request header section (request line and headers); larger
 *                          ones get 431
 * @param prepare           where long requests are parsed, tokenized and hashed
 * @param defaultMaxTokens  max tokens of a chat completion that sets neither {@code max_tokens} nor
 *                          {@code max_completion_tokens} (capped by the context left after the prompt);
 *                          text completions default to 16 as OpenAI documents
 * @param flow              flow control: per-model in-flight limit, queue, priorities, fairness
 * @param auth              API keys
 * @param rateLimit         per-key request rate limit
 * @param limits            where the rate limit and per-tenant in-flight limits are counted: this process
 *                          alone, or a Redis every gateway replica shares
 * @param metrics           tag bounds of the per-tenant meters
 * @param records           request records on {@code flotilla.requests}
 * @param prefixIsolation   tenant-salted prefix sharing: the salt's key and per API key overrides of
 *                          each model's {@code prefix-sharing}
 * @param responses         the store of {@code /v1/responses}
 * @param promptCache       chat prompts kept by their message list, so that a conversation that resends its
 *                          history tokenizes and hashes only its new messages
 * @param kubernetes        on Kubernetes: the runtime ConfigMap of flow-control bands and the rate limit
 */
@Validated
@ConfigurationProperties("flotilla.gateway")
public record GatewayProperties(
        @DefaultValue("localhost:7001") @NotBlank String routerAddress,
        @DefaultValue("flotilla-sim") @NotBlank String defaultModel,
        @DefaultValue @Valid RouteDeadline routeDeadline,
        @DefaultValue("1s") @NotNull Duration routerCallTimeout,
        @DefaultValue("30s") @NotNull Duration prefillTimeout,
        @DefaultValue("60s") @NotNull Duration streamIdleTimeout,
        @DefaultValue("3") @Min(0) @Max(100) int migrationLimit,
        @DefaultValue("1500ms") @NotNull Duration modelsCacheTtl,
        @DefaultValue("8MB") @NotNull DataSize maxRequestSize,
        @DefaultValue("16KB") @NotNull DataSize maxHeaderSize,
        @DefaultValue @Valid Prepare prepare,
        @DefaultValue("1024") @Min(1) int defaultMaxTokens,
        @DefaultValue @Valid Flow flow,
        @DefaultValue @Valid Auth auth,
        @DefaultValue @Valid RateLimit rateLimit,
        @DefaultValue @Valid Limits limits,
        @DefaultValue @Valid Metrics metrics,
        @DefaultValue @Valid Records records,
        Map<String, Model> models,
        @DefaultValue @Valid PrefixIsolation prefixIsolation,
        @DefaultValue @Valid Responses responses,
        @DefaultValue @Valid PromptCache promptCache,
        @DefaultValue @Valid Kubernetes kubernetes) {

    public GatewayProperties {
        models = models == null ? Map.of() : Map.copyOf(models);
    }

    /** Settings of {@code model}: its entry in {@link #models()}, or the defaults. */
    public Model model(String model) {
        return models.getOrDefault(model, Model.DEFAULTS);
    }

    /** What the generation path reads of these properties, with the defaults applied. */
    public GenerationSettings generation() {
        Map<String, GenerationSettings.Model> resolved = new java.util.HashMap<>();
        models.forEach((name, m) -> resolved.put(name, m.resolved(flow)));
        return new GenerationSettings(resolved, Model.DEFAULTS.resolved(flow), promptCache.enabled(),
                promptCache.maxSize().toBytes(), prefixIsolation.saltSecret(), prefixIsolation.keys());
    }

    /**
     * The deadline of one {@code Route} attempt: {@code clamp(multiplier × p(percentile) of the Route
     * latency measured over the last one to two windows, floor, ceiling)}; the ceiling until a window
     * holds {@code minSamples} calls. Past it the next router replica is tried, then the gateway picks
     * the worker itself.
     *
     * @param floor      shortest deadline
     * @param ceiling    longest deadline (and the deadline of a cold gateway)
     * @param percentile the latency percentile the deadline follows
     * @param multiplier headroom over that percentile
     * @param window     measurement window
     * @param minSamples calls a window needs before the deadline moves
     */
    public record RouteDeadline(
            @DefaultValue("50ms") @NotNull Duration floor,
            @DefaultValue("1s") @NotNull Duration ceiling,
            @DefaultValue("99") @DecimalMin("1") @DecimalMax("100") double percentile,
            @DefaultValue("2") @DecimalMin("1") double multiplier,
            @DefaultValue("10s") @NotNull Duration window,
            @DefaultValue("20") @Min(1) int minSamples) {
    }

    /**
     * The chat-prompt cache: the token ids (and block hashes) of each chat request's rendered message list,
     * reused by a later request that starts with the same messages when its rendering starts with the same
     * text; the ids are always those of tokenizing the whole rendering.
     *
     * @param enabled whether chat prompts are kept and reused
     * @param maxSize most memory the kept ids and hashes take (4 bytes per id, 8 per block hash)
     */
    public record PromptCache(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("32MB") @NotNull DataSize maxSize) {
    }

    /**
     * Where long requests are parsed, tokenized and hashed: bodies over {@code inlineBytes} go to a
     * scheduler of {@code threads} threads, so a burst of long prompts cannot hold the event loops or
     * every core.
     *
     * @param threads     threads of the prepare scheduler; 0 means half the cores (at least one)
     * @param inlineBytes bodies up to this size are parsed on the event loop (cheaper than a hand-off)
     * @param inlineTokens prompts up to this many tokens become a {@code GenerateRequest} on the thread
     *                     that read the Route answer; longer ones on the prepare scheduler, so the router
     *                     channel's I/O thread never builds a long request while other Route answers wait
     */
    public record Prepare(
            @DefaultValue("0") @Min(0) int threads,
            @DefaultValue("64KB") @NotNull DataSize inlineBytes,
            @DefaultValue("4096") @Min(0) int inlineTokens) {

        public int threadsOrDefault() {
            return threads > 0 ? threads : Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
        }
    }

    /**
     * Flow control, per model. A request is
     * dispatched when its model's pool is not saturated — the router's pushed capacity, its busy answers
     * and the gateway's own {@code maxInFlight} — else it waits, at most {@code queueTimeout} (or its
     * {@code x-flotilla-queue-timeout}), in a queue of at most {@code maxQueued}: strict between bands,
     * deficit round robin by estimated cost between flows of a band, earliest deadline first inside a
     * flow. A full queue answers 429 (or displaces a lower band's waiter); a wait past the deadline 503.
     *
     * @param maxInFlight        requests of one model dispatched and not finished
     * @param maxQueued          requests of one model waiting; 0 rejects at once when saturated
     * @param maxRouting         requests of one model released to Route at once (a capacity push frees
     *                           this many, not the whole queue)
     * @param queueTimeout       longest wait of a request that names none
     * @param maxQueueTimeout    longest wait a request may ask for
     * @param retryAfter         Retry-After of 429 queue-full and 503 queue-timeout / displaced
     * @param pollInterval       without a capacity stream, the longest a busy answer holds dispatch
     * @param quantum            DRR tokens per round for a flow of weight 1
     * @param defaultPriority    band of requests that name none and whose flow has no priority
     * @param prefixMemoryBlocks block hashes remembered for the "not cached" part of the cost estimate
     * @param tenantMaxInFlight  requests of one flow (API key id, or tenant without keys) dispatched and
     *                           not finished, at most, across every model and, with a shared store
     *                           ({@code limits.redis-uri}), across every gateway replica; a flow at its
     *                           limit waits in the queue. 0: no limit
     * @param tenants            per flow (API key id {@code key-…}, or tenant): priority, max priority,
     *                           weight, in-flight limit; these flows also get their own tenant tag on metrics
     */
    public record Flow(
            @DefaultValue("256") @Min(1) int maxInFlight,
            @DefaultValue("1024") @Min(0) int maxQueued,
            @DefaultValue("8") @Min(1) int maxRouting,
            @DefaultValue("30s") @NotNull Duration queueTimeout,
            @DefaultValue("15m") @NotNull Duration maxQueueTimeout,
            @DefaultValue("1s") @NotNull Duration retryAfter,
            @DefaultValue("500ms") @NotNull Duration pollInterval,
            @DefaultValue("4096") @Min(1) long quantum,
            @DefaultValue("standard") @NotNull String defaultPriority,
            @DefaultValue("262144") @Min(1024) int prefixMemoryBlocks,
            @DefaultValue("0") @Min(0) int tenantMaxInFlight,
            Map<String, Tenant> tenants) {

        public Flow {
            tenants = tenants == null ? Map.of() : Map.copyOf(tenants);
        }
    }

    /**
     * Flow-control settings of one flow (an API key id or a tenant).
     *
     * @param priority    band of its requests that name none ({@code interactive}, {@code standard}, {@code batch})
     * @param maxPriority highest band its requests may ask for with {@code x-flotilla-priority} (403 above)
     * @param weight      its DRR weight: its share of a band while backlogged, relative to weight-1 flows
     * @param maxInFlight its requests dispatched and not finished, at most (overrides
     *                    {@code flow.tenant-max-in-flight}; 0: no limit)
     */
    public record Tenant(String priority, String maxPriority, @DefaultValue("1") @Min(1) int weight,
                         @Min(0) Integer maxInFlight) {
    }

    /**
     * API keys. With no key configured (neither list nor file) the API is open. Otherwise every
     * {@code /v1/**} request needs {@code Authorization: Bearer <key>} with one of them.
     *
     * @param apiKeys     accepted keys
     * @param apiKeysFile file with more accepted keys, one per line; blank lines and lines starting
     *                    with {@code #} are skipped; read at startup
     */
    public record Auth(@DefaultValue List<String> apiKeys, String apiKeysFile) {

        public Auth {
            apiKeys = apiKeys == null ? List.of() : List.copyOf(apiKeys);
        }
    }

    /**
     * Per-key rate limit: a token bucket per API key id (all callers without a key share {@code anonymous})
     * of {@code requestsPerPeriod} tokens, refilled by that many every {@code period} (Bucket4j); shared by
     * every gateway replica when {@code limits.redis-uri} is set.
     *
     * @param requestsPerPeriod requests one key may start per period; 0 disables rate limiting
     * @param period            refill period of the limit
     */
    public record RateLimit(
            @DefaultValue("0") @Min(0) int requestsPerPeriod,
            @DefaultValue("1s") @NotNull Duration period) {

        public RateLimit {
            if (requestsPerPeriod > 0 && period != null && (period.isNegative() || period.isZero()
                    || period.toNanos() < requestsPerPeriod)) {
                throw new IllegalArgumentException("flotilla.gateway.rate-limit: " + requestsPerPeriod + " requests per "
                        + period + " is not a rate a token bucket can count (a positive period, at most one request per "
                        + "nanosecond)");
            }
        }

        public boolean enabled() {
            return requestsPerPeriod > 0;
        }
    }

    /**
     * Where the limits are counted. Without {@code redisUri} every gateway counts alone (a limit of N per
     * replica). With it, the per-key rate limit (Bucket4j's compare-and-swap buckets) and the per-tenant
     * in-flight limit (leases in a sorted set per flow) are counted in that Redis, so they hold across
     * every replica. While the store cannot be reached the gateway falls back to counting alone, within
     * the same call, counted in {@code flotilla_gateway_limits_fallback_total}: fail-open.
     *
     * @param redisUri       {@code redis://host:port} (or {@code rediss://}, with a password as Lettuce's URI
     *                       syntax allows); none: local limits only
     * @param timeout        longest wait for one store call before the call falls back
     * @param connectTimeout longest wait for a connection to the store
     * @param openFor        after failing calls the store is skipped (local limits, no wait) this long before it
     *                       is tried again
     * @param leaseTtl       an in-flight lease not renewed within this long is dropped (a gateway that died
     *                       frees its tenants' places after it); renewed every third of it
     * @param recheck        a flow the store found at its limit is asked again after this long, when no
     *                       release notice came first
     * @param keyPrefix      prefix of every key and channel the gateways use in the store
     */
    public record Limits(
            String redisUri,
            @DefaultValue("50ms") @NotNull Duration timeout,
            @DefaultValue("1s") @NotNull Duration connectTimeout,
            @DefaultValue("2s") @NotNull Duration openFor,
            @DefaultValue("30s") @NotNull Duration leaseTtl,
            @DefaultValue("250ms") @NotNull Duration recheck,
            @DefaultValue("flotilla:") @NotNull String keyPrefix) {

        public boolean shared() {
            return redisUri != null && !redisUri.isBlank();
        }
    }

    /**
     * Stored responses of {@code /v1/responses} ({@code store: true}, the default): in the shared Redis of
     * {@code limits.redis-uri} when it is set, so every replica reads what any stored, else in this gateway's memory.
     *
     * @param ttl          how long a stored response can be retrieved or continued
     * @param maxResponses most responses the in-memory store holds; the oldest go first (Redis holds what its
     *                     own memory allows, each key for {@code ttl})
     * @param maxBytes     largest stored record (response and its input items); a larger one is not stored
     */
    public record Responses(
            @DefaultValue("30d") @NotNull Duration ttl,
            @DefaultValue("10000") @Min(1) int maxResponses,
            @DefaultValue("4MB") @NotNull DataSize maxBytes) {
    }

    /**
     * Per-tenant meters.
     *
     * @param tenantTags flows, beyond those listed in {@code flow.tenants}, that get their own {@code tenant}
     *                   tag, first come first served; every later flow is tagged {@code other}, so a caller
     *                   cannot grow the series without bound
     */
    public record Metrics(@DefaultValue("50") @Min(0) @Max(10000) int tenantTags) {
    }

    /**
     * Request records.
     *
     * @param enabled      publish one {@code RequestRecord} per finished request on {@code flotilla.requests}
     * @param buffer       records held while Kafka is slow or down; beyond it records are dropped and counted
     * @param loadInterval how often the gateway's flow-control queue and in-flight requests per model go to
     *                     {@code flotilla.gateway-load} (the planner counts queued requests as demand); 0: never
     */
    public record Records(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("10000") @Min(1) int buffer,
            @DefaultValue("1s") Duration loadInterval) {
    }

    /**
     * Tenant-salted prefix sharing (docs/tenancy.md).
     *
     * @param saltSecret key of the HMAC that turns a tenant into its salt; every gateway of a cluster must
     *                   have the same one (else one tenant's requests through two gateways share nothing).
     *                   Empty: a built-in key, which makes salts guessable from tenant ids (the launcher
     *                   generates a secret per cluster)
     * @param keys       per API key id ({@code key-…}): its prefix sharing, whatever its models say (a
     *                   trusted internal key may share; an outside one may be isolated on a shared model)
     */
    public record PrefixIsolation(@DefaultValue("") String saltSecret, Map<String, PrefixSharing> keys) {
        public PrefixIsolation {
            keys = keys == null ? Map.of() : Map.copyOf(keys);
        }
    }

    /**
     * Settings of one model. Every field may be left out.
     *
     * @param tokenizer    without {@code model-dir}: the built-in tokenizer, {@code cl100k_base} (default).
     *                     With it: only the tokenizer id (default: {@code name_or_path} of
     *                     {@code tokenizer_config.json}, else the directory's name). Either way it is the
     *                     tokenizer id of the model's block-hash namespace, so it must equal the workers'
     * @param chatTemplate a built-in chat template, {@code chatml} (default without {@code model-dir}); with
     *                     {@code model-dir} it replaces the directory's own Jinja template
     * @param modelDir     HuggingFace model directory with {@code tokenizer.json} and the chat template
     *                     ({@code tokenizer_config.json} or {@code chat_template.jinja}); when set, prompts are
     *                     tokenized with it and rendered with its template
     * @param kvLayout     KV layout of the block-hash namespace; default {@code bf16/bs<block size>/paged}
     *                     with the block size the workers advertise
     * @param maxContext   longest prompt plus output in tokens (default 131072)
     * @param allowDisagg  let the router pick a separate prefill worker (default true)
     * @param maxInFlight  overrides {@code flow.max-in-flight} for this model
     * @param maxQueued    overrides {@code flow.max-queued} for this model
     * @param queueTimeout overrides {@code flow.queue-timeout} for this model
     * @param toolParser   how the model writes tool calls: {@code hermes} (Hermes, Qwen 2.5/3; the default
     *                     with the built-in ChatML template, which renders tools that way), {@code llama3-json},
     *                     {@code mistral}, {@code deepseek-v3}, or {@code none}; without one, requests with
     *                     tools are refused (400) unless {@code tool_choice} forces the call
     * @param reasoningParser how the model separates its reasoning: {@code deepseek-r1}, {@code qwen3}, or
     *                     none (default): the reasoning then stays in the content
     * @param prefixSharing  {@code global} (default) or {@code tenant}: whether tenants share cached prefixes
     * @param publicPrefixes in {@code tenant} mode, prompt prefixes every tenant may share (system prompts,
     *                       few-shot examples): the leading blocks of a prompt that lie wholly inside one (as
     *                       plain text, or as a chat's system message) are hashed without the tenant's salt
     */
    public record Model(String tokenizer, String chatTemplate, Path modelDir, String kvLayout,
                        @Min(1) Integer maxContext, Boolean allowDisagg, @Min(1) Integer maxInFlight,
                        @Min(0) Integer maxQueued, Duration queueTimeout, String toolParser, String reasoningParser,
                        PrefixSharing prefixSharing, List<String> publicPrefixes) {

        public static final int DEFAULT_MAX_CONTEXT = 131072;
        static final Model DEFAULTS = new Model(null, null, null, null, null, null, null, null, null, null, null, null,
                null);

        public Model {
            publicPrefixes = publicPrefixes == null ? List.of() : List.copyOf(publicPrefixes);
        }

        public PrefixSharing prefixSharingOrDefault() {
            return prefixSharing == null ? PrefixSharing.GLOBAL : prefixSharing;
        }

        public int maxContextOrDefault() {
            return maxContext == null ? DEFAULT_MAX_CONTEXT : maxContext;
        }

        public boolean allowDisaggOrDefault() {
            return allowDisagg == null || allowDisagg;
        }

        /** These settings with {@code flow}'s limits where the model sets none, and the other defaults. */
        GenerationSettings.Model resolved(Flow flow) {
            FlowLimits limits = new FlowLimits(maxInFlight != null ? maxInFlight : flow.maxInFlight(),
                    maxQueued != null ? maxQueued : flow.maxQueued(), flow.maxRouting(),
                    queueTimeout != null ? queueTimeout : flow.queueTimeout());
            return new GenerationSettings.Model(toolParser, reasoningParser, maxContextOrDefault(),
                    allowDisaggOrDefault(), limits, kvLayout, prefixSharingOrDefault(), publicPrefixes);
        }
    }

    /**
     * The gateway on Kubernetes; off outside it.
     *
     * @param enabled   watch the runtime ConfigMap {@code configMap} of {@code namespace}
     * @param namespace namespace of the ConfigMap (the gateway's own, on Kubernetes)
     * @param configMap name of the ConfigMap whose data sets flow-control bands and the rate limit at run time (while
     *                  it does not exist, the gateway runs as configured)
     */
    public record Kubernetes(
            @DefaultValue("false") boolean enabled,
            @DefaultValue("flotilla") @NotBlank String namespace,
            @DefaultValue("flotilla-gateway-runtime") @NotBlank String configMap) {
    }
}
