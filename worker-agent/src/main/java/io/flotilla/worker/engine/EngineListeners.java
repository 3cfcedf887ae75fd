package io.flotilla.worker.engine;

import java.util.Objects;
import java.util.function.DoubleConsumer;

/**
 * The observers an engine calls, given when it is built, so that nothing it emits between start-up and a later
 * registration is lost and no engine needs a setter per observer. Every callback runs on an engine thread and must
 * not block (see {@link Engine}).
 *
 * @param kvEvents        every KV event batch, in order (see {@link KvEventListener}); engines without KV state never
 *                        call it
 * @param stepMs          each executed engine step's duration in milliseconds; engines without observable steps
 *                        (remote servers) never call it
 * @param adaptersChanged the set of loaded LoRA adapters changed, so the worker can advertise it at once
 */
public record EngineListeners(KvEventListener kvEvents, DoubleConsumer stepMs, Runnable adaptersChanged) {

    /** Observers that ignore everything. */
    public static final EngineListeners NONE = new EngineListeners((position, events) -> { }, ms -> { }, () -> { });

    public EngineListeners {
        Objects.requireNonNull(kvEvents, "kvEvents");
        Objects.requireNonNull(stepMs, "stepMs");
        Objects.requireNonNull(adaptersChanged, "adaptersChanged");
    }

    /** Only KV events observed. */
    public static EngineListeners kvEvents(KvEventListener kvEvents) {
        return NONE.withKvEvents(kvEvents);
    }

    public EngineListeners withKvEvents(KvEventListener listener) {
        return new EngineListeners(listener, stepMs, adaptersChanged);
    }

    public EngineListeners withAdaptersChanged(Runnable changed) {
        return new EngineListeners(kvEvents, stepMs, changed);
    }
}
