package io.flotilla.gateway.config;

import jakarta.validation.Valid;
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
 * @param routerAddress     host:port of the router's RouterService
 * @param defaultModel      model used when a request names none
 * @param routeTimeout      deadline of one {@code Route} call
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
 * @param defaultMaxTokens  max tokens of a chat completion that sets neither {@code max_tokens} nor
 *                          {@code max_completion_tokens} (capped by the context left after the prompt);
 *                          text completions default to 16 as OpenAI documents
 * @param admission         per-model in-flight limit and wait queue
 * @param auth              API keys
 * @param rateLimit         per-key request rate limit
 * @param records           request records on {@code flotilla.requests}
 */
@Validated
@ConfigurationProperties("flotilla.gateway")
public record GatewayProperties(
        @DefaultValue("localhost:7001") @NotBlank String routerAddress,
        @DefaultValue("flotilla-sim") @NotBlank String defaultModel,
        @DefaultValue("1s") @NotNull Duration routeTimeout,
        @DefaultValue("1s") @NotNull Duration routerCallTimeout,
        @DefaultValue("30s") @NotNull Duration prefillTimeout,
        @DefaultValue("60s") @NotNull Duration streamIdleTimeout,
        @DefaultValue("3") @Min(0) @Max(100) int migrationLimit,
        @DefaultValue("1500ms") @NotNull Duration modelsCacheTtl,
        @DefaultValue("8MB") @NotNull DataSize maxRequestSize,
        @DefaultValue("1024") @Min(1) int defaultMaxTokens,
        @DefaultValue @Valid Admission admission,
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
     * Admission control, per model: at most {@code maxInFlight} requests run; up to {@code maxQueued}
     * more wait, each at most {@code queueTimeout}. A full queue answers 429 at once; a wait past the
     * timeout answers 503 with {@code Retry-After: retryAfter}.
     *
     * @param maxInFlight  requests of one model running at once
     * @param maxQueued    requests of one model waiting for a slot; 0 rejects at once when all slots are taken
     * @param queueTimeout longest wait for a slot
     * @param retryAfter   Retry-After sent with 429 (queue full) and 503 (wait timed out)
     */
    public record Admission(
            @DefaultValue("256") @Min(1) int maxInFlight,
            @DefaultValue("1024") @Min(0) int maxQueued,
            @DefaultValue("10s") @NotNull Duration queueTimeout,
            @DefaultValue("1s") @NotNull Duration retryAfter) {
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
     * @param maxInFlight  overrides {@code admission.max-in-flight} for this model
     * @param maxQueued    overrides {@code admission.max-queued} for this model
     * @param queueTimeout overrides {@code admission.queue-timeout} for this model
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
