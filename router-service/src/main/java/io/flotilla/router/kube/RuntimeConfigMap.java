package io.flotilla.router.kube;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.flotilla.router.service.RequestRouter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * Reloads the routing mode and weights from one ConfigMap as it changes (a fabric8 informer on it by name):
 * each version's data is read whole ({@link RuntimeSettings}) and applied through the same
 * {@link RequestRouter#switchMode} the actuator's {@code POST /actuator/router} uses, and
 * {@link RequestRouter#switchWeights}. A version with an unknown key or a bad value is refused whole and logged
 * with the key; deleting the ConfigMap changes nothing. Counted in
 * {@code flotilla_router_runtime_config_total{outcome="applied"|"rejected"}}.
 *
 * <p>Spring Cloud Kubernetes's config reload is not used: it refreshes the whole Environment through
 * spring-cloud-context and rebinds configuration properties, while these settings live in the router's
 * running policy (the path the actuator endpoint already takes); its 5.0.x modules are also built against
 * fabric8 7.4, the project is on 8.0.
 */
public final class RuntimeConfigMap implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RuntimeConfigMap.class);

    private final SharedIndexInformer<ConfigMap> informer;
    private final RequestRouter router;
    private final String name;
    private final Counter applied;
    private final Counter rejected;
    /** The resource version last applied or refused (guarded by this). */
    private String lastVersion;

    public RuntimeConfigMap(KubernetesClient client, String namespace, String name, RequestRouter router, MeterRegistry registry) {
        this.router = router;
        this.name = namespace + "/" + name;
        this.applied = Counter.builder("flotilla.router.runtime_config").tag("outcome", "applied")
                .description("Versions of the runtime ConfigMap applied or refused (an unknown key or a bad value)")
                .register(registry);
        this.rejected = Counter.builder("flotilla.router.runtime_config").tag("outcome", "rejected")
                .description("Versions of the runtime ConfigMap applied or refused (an unknown key or a bad value)")
                .register(registry);
        this.informer = client.configMaps().inNamespace(namespace).withName(name).runnableInformer(0);
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(ConfigMap cm) {
                apply(cm);
            }

            @Override
            public void onUpdate(ConfigMap before, ConfigMap after) {
                if (!java.util.Objects.equals(before.getData(), after.getData())) {
                    apply(after);
                }
            }

            @Override
            public void onDelete(ConfigMap cm, boolean finalStateUnknown) {
                log.info("runtime ConfigMap {} deleted: routing keeps mode {} and its weights", RuntimeConfigMap.this.name,
                        router.mode().configName());
            }
        });
    }

    /**
     * Starts watching; returns once the ConfigMap as it is now (if any) has been applied. The informer's first list
     * completes the start before its handlers have seen it, so the listed version is applied here, and the handler's
     * notice of the same version is skipped.
     */
    public RuntimeConfigMap start(long waitSeconds) throws Exception {
        informer.start().toCompletableFuture().get(waitSeconds, TimeUnit.SECONDS);
        informer.getStore().list().forEach(this::apply);
        return this;
    }

    private synchronized void apply(ConfigMap cm) {
        String version = cm.getMetadata() == null ? null : cm.getMetadata().getResourceVersion();
        if (version != null && version.equals(lastVersion)) {
            return; // seen at start and again from the informer's handler
        }
        lastVersion = version;
        RuntimeSettings s;
        try {
            s = RuntimeSettings.parse(cm.getData());
        } catch (RuntimeSettings.Rejected e) {
            rejected.increment();
            log.warn("runtime ConfigMap {} version {} refused, nothing of it applied: {}", name, version, e.getMessage());
            return;
        }
        s.mode().ifPresent(router::switchMode);
        s.weights(router.config().weights()).ifPresent(router::switchWeights);
        applied.increment();
        log.info("runtime ConfigMap {} version {} applied: mode {}, weights {}", name, version, router.mode().configName(),
                router.config().weights());
    }

    @Override
    public void close() {
        informer.close();
    }
}
