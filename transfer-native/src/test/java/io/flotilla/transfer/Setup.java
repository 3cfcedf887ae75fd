package io.flotilla.transfer;

import java.nio.ByteBuffer;
import java.util.Set;

/** An initiator/target combination the round-trip and rejection tests run on. */
enum Setup {
    NATIVE_SHM(Implementation.NATIVE, Implementation.NATIVE, Backend.SHM),
    NATIVE_TCP(Implementation.NATIVE, Implementation.NATIVE, Backend.TCP),
    NATIVE_UCX(Implementation.NATIVE, Implementation.NATIVE, Backend.UCX),
    JAVA_TCP(Implementation.JAVA, Implementation.JAVA, Backend.TCP),
    NATIVE_TO_JAVA(Implementation.NATIVE, Implementation.JAVA, Backend.TCP),
    JAVA_TO_NATIVE(Implementation.JAVA, Implementation.NATIVE, Backend.TCP);

    final Implementation initiatorEngine;
    final Implementation targetEngine;
    final Backend backend;

    Setup(Implementation initiatorEngine, Implementation targetEngine, Backend backend) {
        this.initiatorEngine = initiatorEngine;
        this.targetEngine = targetEngine;
        this.backend = backend;
    }

    /** Native setups need the library (asserted present by CapabilitiesTest), UCX needs a UCX build. */
    boolean available() {
        boolean needsNative = initiatorEngine == Implementation.NATIVE || targetEngine == Implementation.NATIVE;
        if (needsNative && !TransferAgent.nativeLoaded()) {
            return false;
        }
        return backend != Backend.UCX || TransferAgent.capabilities().nativeBackends().contains(Backend.UCX);
    }

    TransferConfig config(Implementation engine) {
        return TransferConfig.defaults().withImplementation(engine).withBackends(backend).withWorkerThreads(2);
    }

    AgentPair open(String tag) {
        TransferAgent target = TransferAgent.create("target-" + tag, config(targetEngine));
        try {
            return new AgentPair(TransferAgent.create("initiator-" + tag, config(initiatorEngine)), target);
        } catch (RuntimeException e) {
            target.close();
            throw e;
        }
    }

    /** Target memory this setup's backend reaches: shm reaches only shared allocations. */
    Registration targetRegion(TransferAgent target, int bytes) {
        return backend == Backend.SHM || backend == Backend.UCX ? target.allocateShared(bytes)
                : target.register(MemoryRegion.of(ByteBuffer.allocateDirect(bytes)));
    }

    static Set<Setup> all() {
        return Set.of(values());
    }

    /** Two agents; {@link #exchange()} loads each one's metadata into the other. */
    record AgentPair(TransferAgent initiator, TransferAgent target) implements AutoCloseable {

        void exchange() {
            initiator.loadRemoteMetadata(target.localMetadata());
            target.loadRemoteMetadata(initiator.localMetadata());
        }

        String targetName() {
            return target.name();
        }

        @Override
        public void close() {
            try {
                initiator.close();
            } finally {
                target.close();
            }
        }
    }
}
