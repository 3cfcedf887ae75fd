package io.flotilla.gateway.flow;

/**
 * What flow control knows of one request.
 *
 * @param id            request id (logs, the actuator view)
 * @param model         the model whose queue it waits in
 * @param priority      its band
 * @param flow          its flow inside the band: the API key id, else the tenant
 * @param cost          estimated work in tokens (prompt tokens not cached + expected output), at least 1
 * @param deadlineNanos when it stops waiting, on the flow controller's scheduler clock
 */
public record FlowRequest(String id, String model, Priority priority, String flow, long cost, long deadlineNanos) {

    public FlowRequest {
        cost = Math.max(1, cost);
    }
}
