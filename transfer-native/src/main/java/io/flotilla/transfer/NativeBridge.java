package io.flotilla.transfer;

import java.nio.ByteBuffer;

/**
 * The JNI surface of libflotilla_transfer.so (src/main/c/jni.c); names and signatures must match.
 * Strings cross as UTF-8 bytes. Failures throw {@link TransferException}. Agents are handles,
 * requests are native pointers owned by {@link NativeRequest}.
 */
final class NativeBridge {

    static final int ABI_VERSION = 1;
    static final int OP_READ = 1;
    static final int OP_WRITE = 2;

    private NativeBridge() {
    }

    static native int abiVersion();

    static native int compiledBackends();

    static native long agentCreate(byte[] name, int backends, byte[] listenHost, int listenPort, int workerThreads, int ioTimeoutMs);

    static native void agentDestroy(long agent);

    static native int agentBackends(long agent);

    static native long bufferAddress(ByteBuffer directBuffer);

    static native long registerAddress(long agent, long address, long length, int kind);

    /** Fills idAndAddress with {region id, address}; returns a view when length fits a ByteBuffer, else null. */
    static native ByteBuffer allocShared(long agent, long length, long[] idAndAddress);

    static native void deregister(long agent, long region);

    static native byte[] localMetadata(long agent);

    static native byte[] loadRemote(long agent, byte[] metadata);

    static native void invalidateRemote(long agent, byte[] name);

    /** Descriptor lists are (region, offset, length) triples; returns the request pointer. */
    static native long post(long agent, int op, byte[] remote, long[] local, long[] remoteDescs, byte[] notification);

    static native int requestStatus(long request);

    static native int requestWait(long request, long timeoutNanos);

    static native boolean requestCancel(long request);

    static native int requestBackend(long request);

    static native TransferException requestError(long request);

    static native void requestRelease(long request);

    static native void sendNotification(long agent, byte[] remote, byte[] payload);

    /** Alternating sender name and payload, oldest first. */
    static native Object[] pollNotifications(long agent);

    /** Nanoseconds for {@code iters} passes of block-sized memcpy calls over {@code total} bytes. */
    static native long benchMemcpy(long dst, long src, long block, long total, int iters);
}
