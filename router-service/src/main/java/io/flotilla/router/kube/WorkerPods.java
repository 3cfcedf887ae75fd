package io.flotilla.router.kube;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The worker pods of one namespace ({@code flotilla.io/component=worker}), watched through a fabric8 informer.
 * After the informer's first full list, and after every pod event, the names of the pods that exist are handed to
 * the consumer whole (the informer's store is the truth; no event is interpreted on its own). A pod that has
 * terminated for good (phase {@code Failed} or {@code Succeeded}) counts as gone; a terminating pod still exists
 * (its worker drains and says so itself).
 */
public final class WorkerPods implements AutoCloseable {

    public static final String COMPONENT_LABEL = "flotilla.io/component";

    private final SharedIndexInformer<Pod> informer;
    private final Consumer<Set<String>> present;
    private volatile boolean synced;

    public WorkerPods(KubernetesClient client, String namespace, Consumer<Set<String>> present) {
        this.present = present;
        this.informer = client.pods().inNamespace(namespace).withLabel(COMPONENT_LABEL, "worker").runnableInformer(0);
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                changed();
            }

            @Override
            public void onUpdate(Pod before, Pod after) {
                changed();
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                changed();
            }
        });
    }

    /** Starts watching; returns once the first list has been handed over (or throws when it failed within the wait). */
    public WorkerPods start(long waitSeconds) throws Exception {
        informer.start().toCompletableFuture().get(waitSeconds, TimeUnit.SECONDS);
        synced = true;
        changed();
        return this;
    }

    private void changed() {
        if (synced) {
            present.accept(names());
        }
    }

    private Set<String> names() {
        Set<String> out = new TreeSet<>();
        for (Pod pod : informer.getStore().list()) {
            String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
            if (!"Failed".equals(phase) && !"Succeeded".equals(phase)) {
                out.add(pod.getMetadata().getName());
            }
        }
        return out;
    }

    @Override
    public void close() {
        informer.close();
    }
}
