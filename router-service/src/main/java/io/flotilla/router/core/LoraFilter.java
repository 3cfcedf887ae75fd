package io.flotilla.router.core;

/** {@code lora}: the worker can serve the request's LoRA adapter, loaded or loadable (any worker serves the base model). */
public final class LoraFilter implements Filter {

    @Override
    public String name() {
        return "lora";
    }

    @Override
    public boolean admits(RoutingRequest request, WorkerView worker) {
        return worker.adapters().serves(request.loraName());
    }
}
