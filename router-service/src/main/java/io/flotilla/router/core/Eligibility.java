package io.flotilla.router.core;

/**
 * The filters every worker passes before it is scored. A decision never names a worker that fails
 * one, whatever the costs say:
 * <ul>
 *   <li>it accepts requests: READY and routable (lease alive, not suspect);</li>
 *   <li>it serves the request's model with the request's block size (seq hashes of different block
 *       sizes are different identities, so overlaps could not be compared);</li>
 *   <li>it can serve the request's LoRA adapter (loaded or loadable; any worker serves the base model);</li>
 *   <li>for a tenant-salted request, its engine keeps tenants' KV apart (a worker that cannot would share
 *       the tenant's prefixes, so it refuses the request);</li>
 *   <li>for an embedding request, its engine embeds;</li>
 *   <li>it is not in the request's exclude set.</li>
 * </ul>
 */
public final class Eligibility {

    private Eligibility() {
    }

    public static boolean eligible(RoutingRequest request, WorkerView worker) {
        return worker.acceptsRequests()
                && worker.blockSize() == request.blockSize()
                && worker.model().equals(request.model())
                && worker.adapters().serves(request.loraName())
                && (!request.tenantSalted() || worker.isolatesTenants())
                && (!request.embed() || worker.embeds())
                && !request.exclude().contains(worker.id());
    }
}
