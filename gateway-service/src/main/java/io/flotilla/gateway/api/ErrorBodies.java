package io.flotilla.gateway.api;

import io.flotilla.gateway.openai.ApiError;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;

/**
 * Gives the HTTP server's own error responses an OpenAI error body. Requests Netty refuses while
 * decoding — a header section over {@code max-header-size} (431), a request line over the limit
 * (414), a malformed request (400) — never reach WebFlux: Reactor Netty answers them itself with an
 * empty body and closes. This handler sits right after the HTTP codec and fills in the body of such an
 * empty response on its way out.
 */
final class ErrorBodies extends ChannelDuplexHandler {

    static final String NAME = "flotilla-error-bodies";

    private final byte[] tooLargeHeaders;
    private final byte[] tooLongUri;
    private final byte[] badRequest;

    ErrorBodies(JsonMapper json, long maxHeaderBytes) {
        this.tooLargeHeaders = body(json, new ApiError(431, ApiError.INVALID_REQUEST, null, "request_header_fields_too_large",
                "The request's headers are larger than this server accepts (" + maxHeaderBytes + " bytes).", null));
        this.tooLongUri = body(json, new ApiError(414, ApiError.INVALID_REQUEST, null, "uri_too_long",
                "The request URI is longer than this server accepts.", null));
        this.badRequest = body(json, new ApiError(400, ApiError.INVALID_REQUEST, null, "bad_request",
                "The request is not valid HTTP.", null));
    }

    private static byte[] body(JsonMapper json, ApiError error) {
        return ResponseRenderer.errorBody(json, error).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof FullHttpResponse r && r.content().readableBytes() == 0) {
            byte[] body = switch (r.status().code()) {
                case 431 -> tooLargeHeaders;
                case 414 -> tooLongUri;
                case 400 -> badRequest;
                default -> null;
            };
            if (body != null) {
                FullHttpResponse withBody = r.replace(Unpooled.wrappedBuffer(body));
                r.release();
                withBody.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
                msg = withBody;
            }
        }
        super.write(ctx, msg, promise);
    }
}
