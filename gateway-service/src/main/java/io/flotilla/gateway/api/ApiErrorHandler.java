package io.flotilla.gateway.api;

import io.flotilla.gateway.anthropic.AnthropicErrors;
import io.flotilla.gateway.openai.ApiError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;

/**
 * Renders every error of the HTTP API as an OpenAI error body (on {@code /v1/messages}: Anthropic's, with
 * its statuses, {@link AnthropicErrors}), ahead of Spring's own handlers (order
 * -2): {@link ApiError}s as they are, Spring's status exceptions (404 unknown path, 405, 415, …)
 * with their status, and anything unexpected as a 500 {@code server_error} without internals (logged
 * with its stack trace). Once a response is committed nothing can be rendered; streams report their
 * late errors themselves.
 */
@Order(-2)
final class ApiErrorHandler implements WebExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(ApiErrorHandler.class);

    private final JsonMapper json;

    ApiErrorHandler(JsonMapper json) {
        this.json = json;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.isCommitted()) {
            return Mono.error(ex);
        }
        ApiError error = translate(exchange, ex);
        boolean anthropic = AnthropicErrors.anthropicPath(exchange.getRequest().getPath().value());
        response.setStatusCode(HttpStatusCode.valueOf(anthropic ? AnthropicErrors.status(error) : error.status()));
        HttpHeaders headers = response.getHeaders();
        headers.setContentType(MediaType.APPLICATION_JSON);
        headers.remove(ResponseHeaders.WORKER);
        headers.remove(ResponseHeaders.PREFILL_WORKER);
        if (error.retryAfter() != null) {
            headers.set(HttpHeaders.RETRY_AFTER, Long.toString(error.retryAfterSeconds()));
        }
        byte[] body = (anthropic ? AnthropicErrors.body(json, error) : ResponseRenderer.errorBody(json, error))
                .getBytes(StandardCharsets.UTF_8);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    private static ApiError translate(ServerWebExchange exchange, Throwable ex) {
        if (ex instanceof ApiError api) {
            return api;
        }
        if (ex instanceof DataBufferLimitException) {
            return new ApiError(413, ApiError.INVALID_REQUEST, null, "request_too_large", ex.getMessage(), null);
        }
        if (ex instanceof ResponseStatusException rse) {
            int status = rse.getStatusCode().value();
            String message = status == 404
                    ? "Unknown request URL: " + exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath().value() + "."
                    : rse.getReason() != null ? rse.getReason() : rse.getMessage();
            return new ApiError(status, status < 500 ? ApiError.INVALID_REQUEST : ApiError.SERVER, null,
                    status == 404 ? "unknown_url" : null, message, null);
        }
        log.error("unexpected error serving {} {}", exchange.getRequest().getMethod(), exchange.getRequest().getPath(), ex);
        return new ApiError(500, ApiError.SERVER, null, null,
                "The server had an error while processing your request. Sorry about that!", null);
    }
}
