package io.flotilla.router.epp;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/** Envoy's {@code ExternalProcessor}: one {@link ExtProcStream} per HTTP request Envoy asks about. */
public final class ExtProcService extends ExternalProcessorGrpc.ExternalProcessorImplBase {

    private final EndpointPicker picker;
    private final EppSettings settings;

    public ExtProcService(EndpointPicker picker, EppSettings settings) {
        this.picker = picker;
        this.settings = settings;
    }

    @Override
    public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> responses) {
        return new ExtProcStream(picker, settings, (ServerCallStreamObserver<ProcessingResponse>) responses);
    }
}
