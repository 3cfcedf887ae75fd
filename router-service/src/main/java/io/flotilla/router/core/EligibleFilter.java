package io.flotilla.router.core;

/**
 * {@code eligible}: the worker takes requests (READY, lease alive, not suspect), serves the request's model
 * with the request's block size (seq hashes of different block sizes are different identities, so overlaps
 * could not be compared), embeds when the request is an embedding, and is not in the request's exclude set.
 */
public final class EligibleFilter implements Filter {

    @Override
    public String name() {
        return "eligible";
    }

    @Override
    public boolean admits(RoutingRequest request, WorkerView worker) {
        return worker.acceptsRequests()
                && worker.blockSize() == request.blockSize()
                && worker.model().equals(request.model())
                && (!request.embed() || worker.embeds())
                && !request.exclude().contains(worker.id());
    }
}
