package io.flotilla.router.epp;

import com.google.protobuf.ByteString;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpTrailers;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProtocolConfiguration;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One HTTP request as Envoy's ext_proc filter drives a processor in FULL_DUPLEX_STREAMED mode (the
 * Inference Extension's): a gRPC stream of ProcessingRequests sent without waiting for answers, the
 * answers read as they come. Real gRPC over a socket; the messages are Envoy's published protos.
 */
final class EnvoyClient implements AutoCloseable {

    private final BlockingQueue<ProcessingResponse> responses = new LinkedBlockingQueue<>();
    final CompletableFuture<Void> closed = new CompletableFuture<>();
    private ClientCallStreamObserver<ProcessingRequest> requests;
    private boolean first = true;

    EnvoyClient(ManagedChannel channel) {
        ExternalProcessorGrpc.newStub(channel).process(new ClientResponseObserver<ProcessingRequest, ProcessingResponse>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<ProcessingRequest> stream) {
                requests = stream;
            }

            @Override
            public void onNext(ProcessingResponse value) {
                responses.add(value);
            }

            @Override
            public void onError(Throwable t) {
                closed.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                closed.complete(null);
            }
        });
    }

    /** The request headers of a POST with a body to follow, and the subset hint when {@code subset} is not null. */
    EnvoyClient headers(String path, Map<String, String> extra, List<String> subset) {
        HeaderMap.Builder map = HeaderMap.newBuilder()
                .addHeaders(header(":method", "POST")).addHeaders(header(":path", path))
                .addHeaders(header(":authority", "gateway.example")).addHeaders(header("content-type", "application/json"));
        extra.forEach((k, v) -> map.addHeaders(header(k, v)));
        ProcessingRequest.Builder r = ProcessingRequest.newBuilder()
                .setRequestHeaders(HttpHeaders.newBuilder().setHeaders(map).setEndOfStream(false));
        if (subset != null) {
            ListValue.Builder list = ListValue.newBuilder();
            subset.forEach(s -> list.addValues(Value.newBuilder().setStringValue(s)));
            r.setMetadataContext(Metadata.newBuilder().putFilterMetadata(ExtProcStream.SUBSET_NAMESPACE,
                    Struct.newBuilder().putFields(ExtProcStream.SUBSET, Value.newBuilder().setListValue(list).build()).build()));
        }
        return send(r);
    }

    /** The body in {@code chunks} pieces of about equal size, the last one ending the stream. */
    EnvoyClient body(String json, int chunks) {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        int size = (bytes.length + chunks - 1) / chunks;
        for (int off = 0; off < bytes.length; off += size) {
            int n = Math.min(size, bytes.length - off);
            send(ProcessingRequest.newBuilder().setRequestBody(HttpBody.newBuilder()
                    .setBody(ByteString.copyFrom(bytes, off, n)).setEndOfStream(off + n == bytes.length)));
        }
        return this;
    }

    EnvoyClient responseHeaders() {
        return send(ProcessingRequest.newBuilder().setResponseHeaders(HttpHeaders.newBuilder()
                .setHeaders(HeaderMap.newBuilder().addHeaders(header(":status", "200"))
                        .addHeaders(header("content-type", "text/event-stream")))));
    }

    EnvoyClient responseBody(String chunk, boolean end) {
        return send(ProcessingRequest.newBuilder().setResponseBody(HttpBody.newBuilder()
                .setBody(ByteString.copyFromUtf8(chunk)).setEndOfStream(end)));
    }

    EnvoyClient responseTrailers() {
        return send(ProcessingRequest.newBuilder().setResponseTrailers(HttpTrailers.getDefaultInstance()));
    }

    /** The client goes away mid-stream: Envoy resets the ext_proc stream. */
    void reset() {
        requests.cancel("downstream reset", null);
    }

    /** The next answer, or an AssertionError after 5 s. */
    ProcessingResponse next() throws InterruptedException {
        ProcessingResponse r = responses.poll(5, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("no ext_proc response within 5 s");
        }
        return r;
    }

    /** Nothing more within a short wait (for "no further answer" checks). */
    ProcessingResponse poll(long millis) throws InterruptedException {
        return responses.poll(millis, TimeUnit.MILLISECONDS);
    }

    private EnvoyClient send(ProcessingRequest.Builder r) {
        if (first) {
            // Envoy 1.34+ names its processing mode on the first message of a stream.
            r.setProtocolConfig(ProtocolConfiguration.newBuilder()
                    .setRequestBodyMode(ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED)
                    .setResponseBodyMode(ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED));
            first = false;
        }
        requests.onNext(r.build());
        return this;
    }

    private static HeaderValue header(String key, String value) {
        return HeaderValue.newBuilder().setKey(key).setRawValue(ByteString.copyFromUtf8(value)).build();
    }

    @Override
    public void close() {
        if (!closed.isDone()) {
            requests.onCompleted();
        }
    }
}
