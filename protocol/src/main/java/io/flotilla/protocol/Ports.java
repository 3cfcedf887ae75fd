package io.flotilla.protocol;

/** Default ports of ARCHITECTURE "Ports"; every one of them is configurable. */
public final class Ports {

    public static final int GATEWAY_HTTP = 8000;
    public static final int GATEWAY_MANAGEMENT = 8081;
    public static final int ROUTER_GRPC = 7001;
    public static final int ROUTER_MANAGEMENT = 8082;
    public static final int INDEXER_GRPC = 7002;
    public static final int INDEXER_MANAGEMENT = 8083;
    public static final int PLANNER_HTTP = 8084;
    public static final int PLANNER_MANAGEMENT = 8084;
    public static final int WORKER_GRPC_BASE = 7100;
    public static final int WORKER_TRANSFER_BASE = 7300;
    public static final int WORKER_MANAGEMENT_BASE = 8100;
    public static final int KAFKA = 9092;

    private Ports() {
    }

    /** Router replicas beyond the first: router n (n = 1 … 9) serves gRPC on 7010+n, management on 8090+n. */
    public static final int MAX_ROUTERS = 10;

    /** Router replica n's gRPC port: 7001 for the first, 7010+n for the others. */
    public static int routerGrpc(int n) {
        checkRouter(n);
        return n == 0 ? ROUTER_GRPC : 7010 + n;
    }

    /** Router replica n's management port: 8082 for the first, 8090+n for the others. */
    public static int routerManagement(int n) {
        checkRouter(n);
        return n == 0 ? ROUTER_MANAGEMENT : 8090 + n;
    }

    /** Router replica n's name: {@code router} for the first (as with one router), {@code router-n} for the others. */
    public static String routerName(int n) {
        checkRouter(n);
        return n == 0 ? "router" : "router-" + n;
    }

    private static void checkRouter(int n) {
        if (n < 0 || n >= MAX_ROUTERS) {
            throw new IllegalArgumentException("router number must be in [0, " + MAX_ROUTERS + "): " + n);
        }
    }

    public static int workerGrpc(int n) {
        return WORKER_GRPC_BASE + n;
    }

    public static int workerTransfer(int n) {
        return WORKER_TRANSFER_BASE + n;
    }

    public static int workerManagement(int n) {
        return WORKER_MANAGEMENT_BASE + n;
    }

    /** Worker n's id: {@code worker-n}. */
    public static String workerId(int n) {
        return "worker-" + n;
    }
}
