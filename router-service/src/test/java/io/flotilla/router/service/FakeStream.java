package io.flotilla.router.service;

import io.grpc.stub.ServerCallStreamObserver;

import java.util.ArrayList;
import java.util.List;

/**
 * A server stream without a transport: records what was sent, and its readiness is set by the test
 * (gRPC flow control as the publisher sees it). The handlers the service registers can be fired.
 */
final class FakeStream<T> extends ServerCallStreamObserver<T> {

    final List<T> sent = new ArrayList<>();
    Throwable error;
    boolean completed;
    private boolean ready = true;
    private boolean cancelled;
    private Runnable onReady = () -> { };
    private Runnable onCancel = () -> { };

    /** Transport not ready: the service must hold what it has; ready again fires the on-ready handler. */
    void ready(boolean value) {
        ready = value;
        if (value) {
            onReady.run();
        }
    }

    /** The client went away. */
    void cancel() {
        cancelled = true;
        onCancel.run();
    }

    T last() {
        return sent.get(sent.size() - 1);
    }

    @Override
    public boolean isReady() {
        return ready && !cancelled;
    }

    @Override
    public boolean isCancelled() {
        return cancelled;
    }

    @Override
    public void setOnReadyHandler(Runnable handler) {
        onReady = handler;
    }

    @Override
    public void setOnCancelHandler(Runnable handler) {
        onCancel = handler;
    }

    @Override
    public void onNext(T value) {
        if (!ready || cancelled || error != null || completed) {
            throw new IllegalStateException("sent on a stream that was not ready or is closed");
        }
        sent.add(value);
    }

    @Override
    public void onError(Throwable t) {
        error = t;
    }

    @Override
    public void onCompleted() {
        completed = true;
    }

    @Override
    public void setCompression(String compression) {
    }

    @Override
    public void disableAutoInboundFlowControl() {
    }

    @Override
    public void request(int count) {
    }

    @Override
    public void setMessageCompression(boolean enable) {
    }
}
