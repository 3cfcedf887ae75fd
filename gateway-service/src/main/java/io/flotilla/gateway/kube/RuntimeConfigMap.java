package io.flotilla.gateway.kube;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.flotilla.gateway.flow.FlowPolicy;
import io.flotilla.gateway.limits.KeyRateLimits;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Reloads flow-control bands and the per-key rate limit from one ConfigMap as it changes (a fabric8 informer on it by
 * name): each version's data is read whole over the configured settings ({@link RuntimeSettings}) and applied through
 * {@link FlowPolicy#replace} and {@link KeyRateLimits#reconfigure}, the paths every request reads its band, weight and
 * bucket from. A version with an unknown key or a bad value is refused whole and logged with the key; deleting the
 * ConfigMap returns to the configured settings. Counted in
 * {@code flotilla_gateway_runtime_config_total{outcome="applied"|"rejected"}}.
 *
 * <p>As in the router, Spring Cloud Kubernetes's reload is not used: it refreshes the whole Environment and rebinds
 * configuration properties, while these settings live in running components.
 */
public final class RuntimeConfigMap implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RuntimeConfigMap.class);

    private final SharedIndexInformer<ConfigMap> informer;
    private final FlowPolicy policy;
    private final Optional<KeyRateLimits> limits;
    private final RuntimeSettings configured;
    private final String name;
    private final Counter applied;
    private final Counter rejected;
    /** The resource version last applied or refused (guarded by this). */
    private String lastVersion;

    /** @param limits the rate limit; empty on a gateway started without one (rate keys are then refused) */
    public RuntimeConfigMap(KubernetesClient client, String namespace, String name, FlowPolicy policy,
                            Optional<KeyRateLimits> limits, MeterRegistry registry) {
        this.policy = policy;
        this.limits = limits;
        this.configured = new RuntimeSettings(policy.bands(),
                limits.map(l -> new RuntimeSettings.RateLimit(l.perPeriod(), l.period())));
        this.name = namespace + "/" + name;
        String description = "Versions of the gateway's runtime ConfigMap applied or refused (an unknown key or a bad value)";
        this.applied = Counter.builder("flotilla.gateway.runtime_config").tag("outcome", "applied")
                .description(description).register(registry);
        this.rejected = Counter.builder("flotilla.gateway.runtime_config").tag("outcome", "rejected")
                .description(description).register(registry);
        this.informer = client.configMaps().inNamespace(namespace).withName(name).runnableInformer(0);
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(ConfigMap cm) {
                apply(cm);
            }

            @Override
            public void onUpdate(ConfigMap before, ConfigMap after) {
                if (!Objects.equals(before.getData(), after.getData())) {
                    apply(after);
                }
            }

            @Override
            public void onDelete(ConfigMap cm, boolean finalStateUnknown) {
                deleted();
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

    private synchronized void deleted() {
        lastVersion = null;
        log.info("runtime ConfigMap {} deleted: back to the configured bands and rate limit", name);
        run(configured);
    }

    private synchronized void apply(ConfigMap cm) {
        String version = cm.getMetadata() == null ? null : cm.getMetadata().getResourceVersion();
        if (version != null && version.equals(lastVersion)) {
            return; // seen at start and again from the informer's handler
        }
        lastVersion = version;
        RuntimeSettings s;
        try {
            s = RuntimeSettings.parse(cm.getData(), configured);
        } catch (RuntimeSettings.Rejected e) {
            rejected.increment();
            log.warn("runtime ConfigMap {} version {} refused, nothing of it applied: {}", name, version, e.getMessage());
            return;
        }
        run(s);
        applied.increment();
        log.info("runtime ConfigMap {} version {} applied: default band {}, flows {}, rate limit {}", name, version,
                s.bands().defaultPriority().label(), s.bands().tenants(), s.rate().map(Object::toString).orElse("off"));
    }

    private void run(RuntimeSettings s) {
        policy.replace(s.bands());
        s.rate().ifPresent(r -> limits.ifPresent(l -> l.reconfigure(r.perPeriod(), r.period())));
    }

    @Override
    public void close() {
        informer.close();
    }
}
