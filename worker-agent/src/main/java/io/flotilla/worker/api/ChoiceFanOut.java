package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.RequestHandle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@code n > 1} completions of one prompt on this worker, with the prompt computed once: choice 0 is
 * submitted first; when it produces its first token its prompt blocks are cached, and choices
 * {@code 1 … n-1} are submitted then (engine request ids {@code <id>#<i>}, seed {@code seed + i} when a
 * seed is given, as vLLM numbers its child requests), so the engine finds the prefix cached for each.
 * Engine-independent: any engine with a prefix cache computes the full prompt blocks once. The first
 * failure of any choice fails the Generate and cancels the others; a client cancel cancels all.
 */
final class ChoiceFanOut implements RequestHandle {

    private final EngineRequest first;
    private final List<RequestHandle> handles = new ArrayList<>();
    private boolean cancelled;

    private ChoiceFanOut(EngineRequest first) {
        this.first = first;
    }

    static void start(LocalGenerate worker, EngineRequest request, int n, Replies<GenerateChunk> stream,
                      CancelRelay relay) {
        GenerateOutput out = new GenerateOutput(stream, n);
        ChoiceFanOut fan = new ChoiceFanOut(request);
        out.onFailure(fan::cancel);
        String workerId = worker.identity().id();
        GenerateCall call0 = new GenerateCall(out, 0, workerId, worker.metrics());
        call0.onFirstTokens(() -> CompletableFuture.runAsync(() -> fan.submitRest(worker, out, n)));
        try {
            fan.add(worker.engine().submit(request, call0));
        } catch (RuntimeException e) {
            out.failed(CallFailure.of(e));
            return;
        }
        relay.attach(fan);
    }

    /** Choice i's engine request: the same prompt and sampling, its own id, and seed + i. */
    static EngineRequest choice(EngineRequest request, int i) {
        EngineRequest r = request.withRequestId(request.requestId() + "#" + i);
        return request.seed() == null ? r : r.withSeed(request.seed() + i);
    }

    private void submitRest(LocalGenerate worker, GenerateOutput out, int n) {
        for (int i = 1; i < n; i++) {
            if (isCancelled() || out.closed()) {
                return;
            }
            try {
                add(worker.engine().submit(choice(first, i), new GenerateCall(out, i, worker.identity().id(),
                        worker.metrics())));
            } catch (RuntimeException e) {
                out.failed(CallFailure.of(e));
                return;
            }
        }
    }

    private void add(RequestHandle handle) {
        boolean cancelNow;
        synchronized (this) {
            handles.add(handle);
            cancelNow = cancelled;
        }
        if (cancelNow) {
            handle.cancel();
        }
    }

    private synchronized boolean isCancelled() {
        return cancelled;
    }

    @Override
    public String requestId() {
        return first.requestId();
    }

    @Override
    public void cancel() {
        List<RequestHandle> all;
        synchronized (this) {
            cancelled = true;
            all = List.copyOf(handles);
        }
        all.forEach(RequestHandle::cancel);
    }
}
