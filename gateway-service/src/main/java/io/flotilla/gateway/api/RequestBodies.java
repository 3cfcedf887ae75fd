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
 * Reads a request body as JSON within the size limit: 413 with an OpenAI error body when the declared
 * or actual size is over it, 400 when the body is empty or not JSON. Never more than the limit is
 * buffered. A body over the limit is still read to its end and thrown away (up to {@link #DRAIN_LIMIT}),
 * so the client, which is still sending, gets to read the 413 instead of a reset connection; a client
 * that asked {@code Expect: 100-continue} is answered before it sends anything. A body over {@code inlineBytes} is parsed on the bounded {@code prepare}
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

    /** Past this many bytes an oversized body is no longer drained: the 413 goes out and the connection closes. */
    static final long DRAIN_LIMIT = 1L << 30;

    public Mono<JsonNode> readJson(ServerHttpRequest request) {
        long declared = request.getHeaders().getContentLength();
        if (declared > maxBytes && "100-continue".equalsIgnoreCase(request.getHeaders().getFirst("Expect"))) {
            return Mono.error(tooLarge(declared)); // the client waits for our answer before sending the body
        }
        return Mono.defer(() -> {
                    Body b = new Body(maxBytes);
                    return request.getBody()
                            .doOnNext(b::add)
                            .then(Mono.fromCallable(() -> {
                                if (b.over) {
                                    throw tooLarge(b.total);
                                }
                                return b.bytes();
                            }))
                            .doOnError(e -> b.release())
                            .doOnCancel(b::release);
                })
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
                + (size > 0 ? " of " + size + " bytes" : "") + " exceeds the limit of " + maxBytes + " bytes"
                + " (flotilla.gateway.max-request-size).", null);
    }

    /** The body so far: its buffers while within the limit; only a byte count once over it. */
    private static final class Body {
        final int max;
        final java.util.List<DataBuffer> parts = new java.util.ArrayList<>();
        long total;
        boolean over;

        Body(int max) {
            this.max = max;
        }

        synchronized void add(DataBuffer b) {
            total += b.readableByteCount();
            if (!over && total <= max) {
                parts.add(b);
                return;
            }
            DataBufferUtils.release(b);
            if (!over) {
                over = true;
                parts.forEach(DataBufferUtils::release);
                parts.clear();
            }
            if (total > DRAIN_LIMIT) {
                throw new DataBufferLimitException("request body over " + DRAIN_LIMIT + " bytes");
            }
        }

        synchronized void release() {
            parts.forEach(DataBufferUtils::release);
            parts.clear();
        }

        synchronized byte[] bytes() {
            byte[] out = new byte[(int) total];
            int at = 0;
            for (DataBuffer b : parts) {
                int n = b.readableByteCount();
                b.read(out, at, n);
                at += n;
                DataBufferUtils.release(b);
            }
            parts.clear();
            return out;
        }
    }
}
