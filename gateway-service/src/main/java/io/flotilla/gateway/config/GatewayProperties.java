package io.flotilla.gateway.config;

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
 * @param records           request records on {@code flotilla.requests}
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
        @DefaultValue @Valid Records records,
        Map<String, Model> models) {

    public GatewayProperties {
        models = models == null ? Map.of() : Map.copyOf(models);
    }

    /** Settings of {@code model}: its entry in {@link #models()}, or the defaults. */
    public Model model(String model) {
        return models.getOrDefault(model, Model.DEFAULTS);
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
     * Flow control, per model (the former {@code admission.*}, which it replaces). A request is
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
     * @param tenants            per flow (API key id {@code key-…}, or tenant): priority, max priority,
     *                           weight; these flows also get their own tenant tag on metrics
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
     */
    public record Tenant(String priority, String maxPriority, @DefaultValue("1") @Min(1) int weight) {
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
     * Per-key rate limit (Resilience4j RateLimiter, one per API key; all anonymous callers share one).
     *
     * @param requestsPerPeriod requests one key may start per period; 0 disables rate limiting
     * @param period            refresh period of the limit
     */
    public record RateLimit(
            @DefaultValue("0") @Min(0) int requestsPerPeriod,
            @DefaultValue("1s") @NotNull Duration period) {

        public boolean enabled() {
            return requestsPerPeriod > 0;
        }
    }

    /**
     * Request records.
     *
     * @param enabled publish one {@code RequestRecord} per finished request on {@code flotilla.requests}
     * @param buffer  records held while Kafka is slow or down; beyond it records are dropped and counted
     */
    public record Records(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("10000") @Min(1) int buffer) {
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
     */
    public record Model(String tokenizer, String chatTemplate, Path modelDir, String kvLayout,
                        @Min(1) Integer maxContext, Boolean allowDisagg, @Min(1) Integer maxInFlight,
                        @Min(0) Integer maxQueued, Duration queueTimeout, String toolParser, String reasoningParser) {

        public static final int DEFAULT_MAX_CONTEXT = 131072;
        static final Model DEFAULTS = new Model(null, null, null, null, null, null, null, null, null, null, null);

        public int maxContextOrDefault() {
            return maxContext == null ? DEFAULT_MAX_CONTEXT : maxContext;
        }

        public boolean allowDisaggOrDefault() {
            return allowDisagg == null || allowDisagg;
        }
    }
}
