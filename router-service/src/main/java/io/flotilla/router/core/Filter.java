package io.flotilla.router.core;

/**
 * A named rule a worker must pass before it is scored; a decision never names a worker that fails one,
 * whatever the costs say. Contract: pure (a function of the request and the worker's view), cheap (it runs
 * for every worker a decision looks at). Registered by name in {@link PluginRegistry}.
 */
public interface Filter {

    /** The name configuration refers to it by. */
    String name();

    boolean admits(RoutingRequest request, WorkerView worker);
}
