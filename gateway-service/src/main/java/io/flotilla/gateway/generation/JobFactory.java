package io.flotilla.gateway.generation;

import io.flotilla.gateway.client.ModelCatalog;
import io.flotilla.gateway.client.ServedModel;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.CompletionRequest;
import io.flotilla.gateway.openai.EngineParams;
import io.flotilla.gateway.openai.ToolsRequest;
import io.flotilla.gateway.output.ModelOutput;
import io.flotilla.gateway.output.ResponseShape;
import io.flotilla.gateway.tokenize.ChatMessage;
import io.flotilla.gateway.tokenize.ChatPromptCache;
import io.flotilla.gateway.tokenize.ModelTokenization;
import io.flotilla.protocol.hash.ScopedHasher;
import io.flotilla.gateway.tokenize.TemplateRejectedException;
import io.flotilla.gateway.toolcall.ForcedToolCalls;
import io.flotilla.gateway.toolcall.ToolCallIds;
import io.flotilla.gateway.toolcall.ToolCallParser;
import io.flotilla.gateway.toolcall.ToolCallStream;
import io.micrometer.observation.ObservationRegistry;
import reactor.core.observability.micrometer.Micrometer;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Turns a validated {@link CompletionRequest} into a {@link GenerationJob}: resolves the model (404
 * when no live worker serves it; a LoRA adapter's name resolves to its base model and the adapter), gives it
 * its KV scope ({@link KvScopes}), applies the chat template and tokenizes (long text on the bounded
 * {@code prepare} scheduler, off the event loop), checks prompt and output against the model's context
 * (400 {@code context_length_exceeded}) and every sampling parameter against what the model's engines
 * honour (400 naming it), fills in the default output limit and decides how the output is read
 * (tool-call and reasoning parsers, log-probabilities, choices).
 */
public final class JobFactory {

    /** OpenAI's documented default {@code max_tokens} of a text completion. */
    static final int TEXT_DEFAULT_MAX_TOKENS = 16;

    /** The observation of a preparation: model lookup, chat template, tokenization and checks. */
    public static final String PREPARE_OBSERVATION = "flotilla.gateway.prepare";

    private final ObservationRegistry observations;
    private final ModelCatalog catalog;
    private final ModelProfiles profiles;
    private final String defaultModel;
    private final int chatDefaultMaxTokens;
    private final Scheduler prepare;
    private final KvScopes scopes;

    public JobFactory(ModelCatalog catalog, ModelProfiles profiles, String defaultModel, int chatDefaultMaxTokens,
                      Scheduler prepare, KvScopes scopes) {
        this(catalog, profiles, defaultModel, chatDefaultMaxTokens, prepare, scopes, ObservationRegistry.NOOP);
    }

    /** As the other constructor; each preparation is an observation ({@value #PREPARE_OBSERVATION}) of {@code observations}. */
    public JobFactory(ModelCatalog catalog, ModelProfiles profiles, String defaultModel, int chatDefaultMaxTokens,
                      Scheduler prepare, KvScopes scopes, ObservationRegistry observations) {
        this.observations = observations;
        this.catalog = catalog;
        this.scopes = scopes;
        this.prepare = prepare;
        this.profiles = profiles;
        this.defaultModel = defaultModel;
        this.chatDefaultMaxTokens = chatDefaultMaxTokens;
    }

    /** The model a request asks for: its {@code model}, or the configured default. */
    public String modelOf(CompletionRequest request) {
        return request.model() != null ? request.model() : defaultModel;
    }

    /**
     * @param keyId         the API key id the request authenticated with ("" on an open API): with the model's
     *                      prefix sharing it decides whether the request's KV is salted to its tenant
     * @param disaggAllowed whether the client allows disaggregated prefill for this request
     *                      ({@code x-flotilla-disagg}); the model's configuration must allow it too
     */
    public Mono<GenerationJob> prepare(CompletionRequest request, String requestId, String keyId, String tenant,
                                       boolean disaggAllowed) {
        String model = modelOf(request);
        Mono<ModelCatalog.ModelTarget> target = catalog.target(model);
        if (textChars(request) > INLINE_TEXT_CHARS) {
            target = target.publishOn(prepare);
        }
        Mono<GenerationJob> job = target.map(t -> build(request, t.model(), t.adapter(), requestId, keyId, tenant,
                disaggAllowed));
        // a span of the request's trace (its observation is in the subscriber's Reactor context) and a timer
        return observations.isNoop() ? job : job.name(PREPARE_OBSERVATION).tap(Micrometer.observation(observations));
    }

    /**
     * Text up to this many characters is templated and tokenized on the thread that read the request
     * (tens of microseconds); longer text moves to the bounded prepare scheduler so it never holds up
     * the event loop's other connections, and a burst of long prompts cannot take every core. The hop itself costs a thread wake-up, which on a busy machine is
     * a good part of a millisecond of time to first token.
     */
    static final int INLINE_TEXT_CHARS = 4096;

    private static long textChars(CompletionRequest request) {
        long chars = request.promptText() != null ? request.promptText().length() : 0;
        if (request.messages() != null) {
            for (ChatMessage m : request.messages()) {
                chars += m.text().length();
            }
        }
        return chars;
    }

    private GenerationJob build(CompletionRequest request, ServedModel served, String adapter, String requestId,
                                String keyId, String tenant, boolean disaggAllowed) {
        String model = served.name();
        ModelTokenization tokenization = profiles.tokenization(model);
        ModelOutput output = profiles.output(model);
        boolean chat = request.kind() == CompletionKind.CHAT;
        String promptParam = chat ? "messages" : "prompt";
        ToolsRequest tools = request.tools();
        if (tools.active() && !tools.forced() && output.toolParser() == null) {
            throw ApiError.unsupported("tools", "Unsupported parameter 'tools': the model '" + model + "' has no tool-call "
                    + "parser (flotilla.gateway.models." + model + ".tool-parser), so its calls could not be read.");
        }
        EngineParams.checkSupported(request, served.capabilities(), model);
        int vocab = tokenization.tokenizer().vocabSize();
        checkIds("logit_bias", request.sampling().logitBias().keySet(), vocab, model);
        checkIds("stop_token_ids", request.sampling().stopTokenIds(), vocab, model);
        int[] prompt;
        ChatPromptCache.Prompt chatPrompt = null;
        if (chat) {
            try {
                chatPrompt = profiles.chatPrompt(model, request.messages(), tools.templateTools());
                prompt = chatPrompt.ids();
            } catch (TemplateRejectedException e) {
                throw ApiError.invalid("messages", e.getMessage());
            }
        } else if (request.promptText() != null) {
            prompt = tokenization.textPrompt(request.promptText());
        } else {
            prompt = request.promptTokens();
            for (int i = 0; i < prompt.length; i++) {
                if (prompt[i] >= vocab) {
                    throw ApiError.invalid("prompt", "Invalid 'prompt[" + i + "]': token id " + prompt[i]
                            + " is outside the vocabulary of '" + model + "' [0, " + vocab + ").");
                }
            }
        }
        int context = profiles.maxContext(model);
        if (prompt.length >= context) {
            throw contextExceeded(promptParam, context, prompt.length, null);
        }
        int maxTokens;
        if (request.maxTokens() != null) {
            maxTokens = request.maxTokens();
            if ((long) prompt.length + maxTokens > context) {
                throw contextExceeded("max_tokens", context, prompt.length, maxTokens);
            }
        } else {
            maxTokens = Math.min(chat ? chatDefaultMaxTokens : TEXT_DEFAULT_MAX_TOKENS, context - prompt.length);
        }
        // One worker computes every choice, and the first token's log-probability is the prefill worker's.
        boolean disagg = disaggAllowed && profiles.allowDisagg(model) && request.n() == 1 && !request.logprobs().enabled();
        ScopedHasher hasher = ScopedHasher.of(profiles.hasher(model, served.blockSize()), scopes.scope(model, keyId, tenant,
                adapter, prompt, served.blockSize(), served.publicPrefixes()));
        // a chat prompt's hash chain extends its history's, and is kept for the next turn
        long[] hashes = chatPrompt != null ? chatPrompt.seqHashes(new PromptHashChain(hasher)) : null;
        return new GenerationJob(requestId, model, tenant, prompt, maxTokens, EngineParams.sampling(request), request.n(),
                request.stop(), stopTokenIds(request, tokenization), request.sampling().ignoreEos(), disagg,
                hasher, tokenization.tokenizer(), shape(request, output), hashes);
    }

    /** How the output becomes the response: parsers of the model as far as the request uses them. */
    private static ResponseShape shape(CompletionRequest request, ModelOutput output) {
        ToolsRequest tools = request.tools();
        Supplier<ToolCallStream> parse = null;
        if (tools.active()) {
            if (tools.choice() == ToolsRequest.Choice.FUNCTION) {
                parse = () -> ForcedToolCalls.named(tools.function(), ToolCallIds.openAi());
            } else if (tools.choice() == ToolsRequest.Choice.REQUIRED) {
                parse = () -> ForcedToolCalls.required(ToolCallIds.openAi());
            } else {
                ToolCallParser parser = output.toolParser();
                parse = () -> parser.stream(parser.ids());
            }
        }
        boolean chat = request.kind() == CompletionKind.CHAT;
        return new ResponseShape(request.n(), request.stream(), request.stop(), output,
                chat && !tools.forced() ? output.reasoning() : null, parse, tools.parallel(),
                tools.choice() == ToolsRequest.Choice.FUNCTION, request.logprobs().enabled(), request.logprobs().top());
    }

    /** The client's stop token ids, then each stop string that is a single token. */
    private static int[] stopTokenIds(CompletionRequest request, ModelTokenization tokenization) {
        Set<Integer> ids = new LinkedHashSet<>(request.sampling().stopTokenIds());
        for (int id : tokenization.singleTokenStops(request.stop())) {
            ids.add(id);
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    private static void checkIds(String param, Collection<Integer> ids, int vocab, String model) {
        for (int id : ids) {
            if (id >= vocab) {
                throw ApiError.invalid(param, "Invalid '" + param + "': token id " + id + " is outside the vocabulary of '"
                        + model + "' [0, " + vocab + ").");
            }
        }
    }

    private static ApiError contextExceeded(String param, int context, int prompt, Integer output) {
        String message = "This model's maximum context length is " + context + " tokens. However, you requested "
                + (output == null ? prompt + " tokens in the prompt." : (prompt + output) + " tokens (" + prompt
                + " in the prompt, " + output + " in the completion). Please reduce the prompt or the completion length.");
        return new ApiError(400, ApiError.INVALID_REQUEST, param, "context_length_exceeded", message, null);
    }
}
