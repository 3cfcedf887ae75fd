package io.flotilla.gateway.api;

import io.flotilla.gateway.openai.ApiError;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.server.reactive.ServerHttpRequest;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a request body as JSON within the size limit: 413 when the declared or actual size is over
 * it (checked before and while reading, never buffering more than the limit), 400 when the body is
 * empty or not JSON. A body over {@code inlineBytes} is parsed on the bounded {@code prepare}
 * scheduler, so a burst of long prompts never holds the event loops (which also carry every other
 * connection's I/O) and never takes more cores than that scheduler has.
 */
public final class RequestBodies {

    private final JsonMapper json;
    private final int maxBytes;
    private final int inlineBytes;
    private final Scheduler prepare;

    public RequestBodies(JsonMapper json, int maxBytes, int inlineBytes, Scheduler prepare) {
        this.json = json;
        this.maxBytes = maxBytes;
        this.inlineBytes = inlineBytes;
        this.prepare = prepare;
    }

    public int maxBytes() {
        return maxBytes;
    }

    public Mono<JsonNode> readJson(ServerHttpRequest request) {
        long declared = request.getHeaders().getContentLength();
        if (declared > maxBytes) {
            return Mono.error(tooLarge(declared));
        }
        return DataBufferUtils.join(request.getBody(), maxBytes)
                .onErrorMap(DataBufferLimitException.class, e -> tooLarge(-1))
                .map(RequestBodies::bytes)
                .defaultIfEmpty(new byte[0])
                .flatMap(body -> body.length > inlineBytes
                        ? Mono.fromCallable(() -> parse(body)).subscribeOn(prepare)
                        : Mono.fromCallable(() -> parse(body)));
    }

    private JsonNode parse(byte[] body) {
        if (body.length == 0) {
            throw ApiError.invalid(null, "We could not parse the JSON body of your request: the body is empty. "
                    + "Send a JSON object with Content-Type: application/json.");
        }
        try {
            return json.readTree(body);
        } catch (JacksonException e) {
            throw ApiError.invalid(null, "We could not parse the JSON body of your request: " + e.getOriginalMessage());
        }
    }

    ApiError tooLarge(long size) {
        return new ApiError(413, ApiError.INVALID_REQUEST, null, "request_too_large", "The request body"
                + (size > 0 ? " of " + size + " bytes" : "") + " exceeds the limit of " + maxBytes + " bytes.", null);
    }

    private static byte[] bytes(DataBuffer buffer) {
        try {
            byte[] out = new byte[buffer.readableByteCount()];
            buffer.read(out);
            return out;
        } finally {
            DataBufferUtils.release(buffer);
        }
    }
}
