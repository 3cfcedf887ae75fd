package io.flotilla.gateway.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;

/**
 * fabric8's mock API server in CRUD mode with a client, as {@code @EnableKubernetesMockClient(crud = true)} gives,
 * but stopped by the test. Why not the extension: after a watch is closed, the mock's listener waits for its
 * executor on the server's event loop (fabric8 8.0.0 {@code WatchEventsListener.onClosed}), which can hold the loop
 * for about the 10 s the server's shutdown waits, and the extension turns that timeout into a failure of a test
 * whose assertions all passed (seen once in a fresh-clone run). Here the server is stopped after the test's own
 * resources, and a shutdown that outwaits the mock is logged.
 */
final class CrudApiServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CrudApiServer.class);

    private final KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(),
            new HashMap<>(), new KubernetesCrudDispatcher(), false);
    private final KubernetesClient client;

    CrudApiServer() {
        server.init();
        client = server.createClient();
    }

    KubernetesClient client() {
        return client;
    }

    @Override
    public void close() {
        client.close();
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            log.warn("the mock API server did not stop in time ({}); its watch listeners were still closing", e.getMessage());
        }
    }
}
