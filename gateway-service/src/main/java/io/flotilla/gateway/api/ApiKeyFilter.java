package io.flotilla.gateway.api;

import io.flotilla.gateway.openai.ApiError;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import java.security.Principal;

/**
 * Authenticates {@code /v1/**} requests (and {@code /tokenize}, {@code /detokenize}) with
 * {@code Authorization: Bearer <key>} (OpenAI's clients) or
 * {@code x-api-key: <key>} (Anthropic's) when keys are configured (401 {@code authentication_error}
 * otherwise) and passes the key's id on as the exchange's principal (a mutated exchange; the original is
 * left alone). A request with both is judged by its {@code Authorization}. Open when no key is configured.
 */
final class ApiKeyFilter implements WebFilter, Ordered {

    /** The caller, known by its key id. */
    record KeyPrincipal(String id) implements Principal {
        @Override
        public String getName() {
            return id;
        }
    }

    /** The header Anthropic's clients send their key in. */
    static final String API_KEY = "x-api-key";

    private final ApiKeys keys;

    ApiKeyFilter(ApiKeys keys) {
        this.keys = keys;
    }

    @Override
    public int getOrder() {
        return FilterOrder.AUTHENTICATION;
    }

    /** The API ({@code /v1/**}) and vLLM's utility endpoints beside it, which run the model's tokenizer. */
    static boolean protectedPath(String path) {
        return path.startsWith("/v1/") || path.equals("/tokenize") || path.equals("/detokenize");
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (keys.open() || !protectedPath(exchange.getRequest().getPath().value())) {
            return chain.filter(exchange);
        }
        HttpHeaders headers = exchange.getRequest().getHeaders();
        String auth = headers.getFirst(HttpHeaders.AUTHORIZATION);
        String apiKey = headers.getFirst(API_KEY);
        String presented;
        if (auth != null && !auth.isBlank()) {
            if (!auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
                return Mono.error(ApiError.unauthorized("The Authorization header must use Bearer auth "
                        + "(Authorization: Bearer YOUR_KEY)."));
            }
            presented = auth.substring(7);
        } else if (apiKey != null && !apiKey.isBlank()) {
            presented = apiKey;
        } else {
            return Mono.error(ApiError.unauthorized("You didn't provide an API key. You need to provide your API key "
                    + "in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY) or in an "
                    + API_KEY + " header."));
        }
        return keys.identify(presented.strip())
                .map(id -> chain.filter(exchange.mutate().principal(Mono.just(new KeyPrincipal(id))).build()))
                .orElseGet(() -> Mono.error(ApiError.unauthorized("Incorrect API key provided.")));
    }
}
