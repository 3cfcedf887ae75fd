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
        check(n, MAX_ROUTERS, "router");
    }

    /** Gateway replicas: gateway n (n = 1 … 9) serves HTTP on 8000+n, management on 8070+n. */
    public static final int MAX_GATEWAYS = 10;
    /** Models one local cluster serves: the planner of model m (m = 1 … 9) answers on 8060+m. */
    public static final int MAX_MODELS = 10;
    /**
     * The Redis the local cluster's gateways share their limits in. Not Redis' 6379: installing Debian's
     * redis-server starts a system instance there.
     */
    public static final int REDIS = 6380;

    /** Gateway replica n's HTTP port: 8000 for the first, 8000+n for the others. */
    public static int gatewayHttp(int n) {
        check(n, MAX_GATEWAYS, "gateway");
        return GATEWAY_HTTP + n;
    }

    /** Gateway replica n's management port: 8081 for the first, 8070+n for the others. */
    public static int gatewayManagement(int n) {
        check(n, MAX_GATEWAYS, "gateway");
        return n == 0 ? GATEWAY_MANAGEMENT : 8070 + n;
    }

    /** Gateway replica n's name: {@code gateway} for the first, {@code gateway-n} for the others. */
    public static String gatewayName(int n) {
        check(n, MAX_GATEWAYS, "gateway");
        return n == 0 ? "gateway" : "gateway-" + n;
    }

    /** The planner of model m's port (HTTP and management): 8084 for the first model, 8060+m for the others. */
    public static int plannerHttp(int m) {
        check(m, MAX_MODELS, "model");
        return m == 0 ? PLANNER_HTTP : 8060 + m;
    }

    /** The planner of model m's name: {@code planner} for the first model, {@code planner-m} for the others. */
    public static String plannerName(int m) {
        check(m, MAX_MODELS, "model");
        return m == 0 ? "planner" : "planner-" + m;
    }

    private static void check(int n, int max, String what) {
        if (n < 0 || n >= max) {
            throw new IllegalArgumentException(what + " number must be in [0, " + max + "): " + n);
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
