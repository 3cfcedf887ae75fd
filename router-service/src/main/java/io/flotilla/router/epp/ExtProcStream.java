package io.flotilla.router.epp;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.StreamedBodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.TrailersResponse;
import io.envoyproxy.envoy.type.v3.HttpStatus;
import io.envoyproxy.envoy.type.v3.StatusCode;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One HTTP request as Envoy's ext_proc filter streams it: request headers, body chunks, trailers, then the
 * response's headers, body and trailers. The picker decides once the whole request body is in (or at the
 * headers when there is none); the answer is the request-headers response carrying the destination header
 * {@code x-gateway-destination-endpoint} and the same value under {@code envoy.lb} in the dynamic metadata.
 *
 * <p>Body modes: {@code FULL_DUPLEX_STREAMED} (the Inference Extension's, and the default when Envoy does
 * not say) holds the headers response until the body is complete and sends the body back as streamed body
 * responses, as Envoy requires in that mode; {@code BUFFERED} answers the headers at once and puts the
 * destination on the body response. Responses go out in the order Envoy expects: headers, body, trailers.
 *
 * <p>A booking lives from the pick to the end of the response: the last response body chunk, the response
 * trailers, the stream's end or its reset — whichever comes first releases it, once. Messages arrive on one
 * gRPC thread at a time; the pick may complete on the indexer's, hence the lock on this stream.
 */
final class ExtProcStream implements StreamObserver<ProcessingRequest> {

    /** Destination header and metadata key, and the metadata namespace (Endpoint Picker Protocol). */
    static final String DESTINATION = "x-gateway-destination-endpoint";
    static final String LB_NAMESPACE = "envoy.lb";
    static final String SUBSET_NAMESPACE = "envoy.lb.subset_hint";
    static final String SUBSET = "x-gateway-destination-endpoint-subset";
    /** Set on a request let through without a destination (fail-open), naming why. */
    static final String FAIL_OPEN = "x-flotilla-epp-fail-open";
    /** Envoy's recommended bound for one streamed body message (GIE uses 62,000 bytes too). */
    static final int CHUNK = 62_000;

    private final EndpointPicker picker;
    private final EppSettings settings;
    private final ServerCallStreamObserver<ProcessingResponse> out;
    private final Map<String, String> headers = new HashMap<>();
    private final List<String> subset = new ArrayList<>();
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    private ProcessingMode.BodySendMode requestBodyMode = ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED;
    private ProcessingMode.BodySendMode responseBodyMode = ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED;
    private boolean picking;
    private boolean picked;
    private boolean requestTrailersPending;
    private boolean closed;
    private boolean responseStarted;
    private String booked;

    ExtProcStream(EndpointPicker picker, EppSettings settings, ServerCallStreamObserver<ProcessingResponse> out) {
        this.picker = picker;
        this.settings = settings;
        this.out = out;
        out.setOnCancelHandler(this::gone);
    }

    @Override
    public synchronized void onNext(ProcessingRequest request) {
        if (closed) {
            return;
        }
        if (request.hasProtocolConfig()) {
            requestBodyMode = request.getProtocolConfig().getRequestBodyMode();
            responseBodyMode = request.getProtocolConfig().getResponseBodyMode();
        }
        switch (request.getRequestCase()) {
            case REQUEST_HEADERS -> requestHeaders(request);
            case REQUEST_BODY -> requestBody(request.getRequestBody());
            case REQUEST_TRAILERS -> {
                if (picked) {
                    send(ProcessingResponse.newBuilder().setRequestTrailers(TrailersResponse.getDefaultInstance()).build());
                } else {
                    requestTrailersPending = true;
                }
            }
            case RESPONSE_HEADERS -> send(ProcessingResponse.newBuilder()
                    .setResponseHeaders(HeadersResponse.getDefaultInstance()).build());
            case RESPONSE_BODY -> responseBody(request.getResponseBody());
            case RESPONSE_TRAILERS -> {
                send(ProcessingResponse.newBuilder().setResponseTrailers(TrailersResponse.getDefaultInstance()).build());
                release();
            }
            default -> { }
        }
    }

    private void requestHeaders(ProcessingRequest request) {
        for (var h : request.getRequestHeaders().getHeaders().getHeadersList()) {
            String value = h.getRawValue().isEmpty() ? h.getValue() : h.getRawValue().toStringUtf8();
            headers.put(h.getKey().toLowerCase(java.util.Locale.ROOT), value);
        }
        Struct hint = request.getMetadataContext().getFilterMetadataMap().get(SUBSET_NAMESPACE);
        if (hint != null && hint.containsFields(SUBSET)) {
            hint.getFieldsOrThrow(SUBSET).getListValue().getValuesList().forEach(v -> subset.add(v.getStringValue()));
        }
        if (request.getRequestHeaders().getEndOfStream()) {
            pick(null);
        } else if (requestBodyMode == ProcessingMode.BodySendMode.BUFFERED) {
            send(ProcessingResponse.newBuilder().setRequestHeaders(HeadersResponse.getDefaultInstance()).build());
        }
    }

    private void requestBody(HttpBody chunk) {
        if (picking) {
            return;
        }
        if ((long) body.size() + chunk.getBody().size() > settings.maxBody().toBytes()) {
            immediate(413, "request_too_large", "the request body is larger than " + settings.maxBody().toBytes()
                    + " bytes", 0);
            return;
        }
        body.writeBytes(chunk.getBody().toByteArray());
        if (chunk.getEndOfStream()) {
            pick(body.toByteArray());
        }
    }

    private void pick(byte[] requestBody) {
        picking = true;
        picker.pick(Map.copyOf(headers), requestBody, List.copyOf(subset), p -> picked(p, requestBody));
    }

    private synchronized void picked(Pick pick, byte[] requestBody) {
        if (pick instanceof Pick.Routed routed) {
            booked = routed.requestId();
        }
        if (closed) {
            release(); // the client went while the router was deciding
            return;
        }
        if (pick instanceof Pick.Refused r) {
            immediate(r.status(), r.type(), r.message(), r.retryAfterMs());
        } else if (pick instanceof Pick.Routed r) {
            forward(requestBody, r.destination(), null);
        } else if (pick instanceof Pick.Unbooked u) {
            forward(requestBody, u.endpoint(), null);
        } else if (pick instanceof Pick.PassThrough p) {
            forward(requestBody, null, p.reason());
        }
    }

    /** The destination (or, failing open, none) on the headers response, then the body as Envoy's mode wants. */
    private void forward(byte[] requestBody, String destination, String failOpenReason) {
        picked = true;
        HeaderMutation.Builder mutation = HeaderMutation.newBuilder();
        if (destination != null) {
            mutation.addSetHeaders(header(DESTINATION, destination));
        } else {
            mutation.addSetHeaders(header(FAIL_OPEN, failOpenReason));
        }
        CommonResponse common = CommonResponse.newBuilder().setHeaderMutation(mutation).setClearRouteCache(true).build();
        ProcessingResponse.Builder first = ProcessingResponse.newBuilder();
        if (destination != null) {
            first.setDynamicMetadata(Struct.newBuilder().putFields(LB_NAMESPACE, Value.newBuilder().setStructValue(
                    Struct.newBuilder().putFields(DESTINATION, Value.newBuilder().setStringValue(destination).build())).build()));
        }
        boolean buffered = requestBodyMode == ProcessingMode.BodySendMode.BUFFERED && requestBody != null;
        if (buffered) {
            send(first.setRequestBody(BodyResponse.newBuilder().setResponse(common)).build());
        } else {
            send(first.setRequestHeaders(HeadersResponse.newBuilder().setResponse(common)).build());
            if (requestBody != null) {
                for (CommonResponse part : streamed(requestBody)) {
                    send(ProcessingResponse.newBuilder().setRequestBody(BodyResponse.newBuilder().setResponse(part)).build());
                }
            }
        }
        if (requestTrailersPending) {
            send(ProcessingResponse.newBuilder().setRequestTrailers(TrailersResponse.getDefaultInstance()).build());
        }
    }

    private void responseBody(HttpBody chunk) {
        if (!responseStarted && booked != null) {
            responseStarted = true;
            picker.prefillDone(booked);
        }
        BodyResponse.Builder answer = BodyResponse.newBuilder();
        if (responseBodyMode == ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED) {
            answer.setResponse(CommonResponse.newBuilder().setBodyMutation(BodyMutation.newBuilder().setStreamedResponse(
                    StreamedBodyResponse.newBuilder().setBody(chunk.getBody()).setEndOfStream(chunk.getEndOfStream()))));
        }
        send(ProcessingResponse.newBuilder().setResponseBody(answer).build());
        if (chunk.getEndOfStream()) {
            release();
        }
    }

    private void immediate(int status, String type, String message, long retryAfterMs) {
        ImmediateResponse.Builder r = ImmediateResponse.newBuilder()
                .setStatus(HttpStatus.newBuilder().setCode(statusCode(status)))
                .setBody(ByteString.copyFromUtf8(errorBody(type, message)))
                .setDetails(type)
                .setHeaders(HeaderMutation.newBuilder().addSetHeaders(header("content-type", "application/json")));
        if (retryAfterMs > 0) {
            r.getHeadersBuilder().addSetHeaders(header("retry-after", Long.toString(Math.max(1, (retryAfterMs + 999) / 1000))));
        }
        send(ProcessingResponse.newBuilder().setImmediateResponse(r).build());
        closed = true;
        out.onCompleted();
    }

    private static StatusCode statusCode(int status) {
        StatusCode code = StatusCode.forNumber(status);
        return code != null ? code : StatusCode.ServiceUnavailable;
    }

    /** The body split into streamed body responses of at most {@link #CHUNK} bytes, the last one ending the stream. */
    static List<CommonResponse> streamed(byte[] body) {
        List<CommonResponse> parts = new ArrayList<>();
        int offset = 0;
        do {
            int n = Math.min(CHUNK, body.length - offset);
            parts.add(CommonResponse.newBuilder().setBodyMutation(BodyMutation.newBuilder().setStreamedResponse(
                    StreamedBodyResponse.newBuilder().setBody(ByteString.copyFrom(body, offset, n))
                            .setEndOfStream(offset + n == body.length))).build());
            offset += n;
        } while (offset < body.length);
        return parts;
    }

    private static HeaderValueOption header(String key, String value) {
        return HeaderValueOption.newBuilder().setHeader(HeaderValue.newBuilder().setKey(key)
                .setRawValue(ByteString.copyFrom(value, StandardCharsets.UTF_8))).build();
    }

    /** An OpenAI error body, so a client behind the gateway reads the refusal as it reads the gateway's. */
    private static String errorBody(String type, String message) {
        return "{\"error\":{\"message\":" + quote(message) + ",\"type\":" + quote(type) + ",\"code\":" + quote(type) + "}}";
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    private void send(ProcessingResponse response) {
        if (!closed) {
            out.onNext(response);
        }
    }

    private synchronized void release() {
        if (booked != null) {
            picker.release(booked);
            booked = null;
        }
    }

    /** The stream went (reset, cancelled, or Envoy's error): whatever was booked is released. */
    private synchronized void gone() {
        closed = true;
        release();
    }

    @Override
    public void onError(Throwable t) {
        gone();
    }

    @Override
    public synchronized void onCompleted() {
        release();
        if (!closed) {
            closed = true;
            out.onCompleted();
        }
    }
}
