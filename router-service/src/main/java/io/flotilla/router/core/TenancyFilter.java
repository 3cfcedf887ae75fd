package io.flotilla.router.core;

/**
 * {@code tenancy}: a tenant-salted request goes only to a worker whose engine keeps tenants' KV apart; one
 * that cannot would share the tenant's prefixes.
 */
public final class TenancyFilter implements Filter {

    @Override
    public String name() {
        return "tenancy";
    }

    @Override
    public boolean admits(RoutingRequest request, WorkerView worker) {
        return !request.tenantSalted() || worker.isolatesTenants();
    }
}
