package io.flotilla.transfer;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Optional;

/**
 * A native request. The native object is released exactly once: by {@link #close()} once no
 * thread is inside a native call on it, or by the cleaner when this object becomes unreachable.
 */
final class NativeRequest implements TransferRequest {

    private static final Cleaner CLEANER = Cleaner.create();
    private static final long WAIT_SLICE_NANOS = 50_000_000L; // native waits are not interruptible; wait in slices

    private final long pointer;
    private final Backend backend;
    private final Cleaner.Cleanable cleanable;
    private final Object lock = new Object();
    private int users;
    private boolean closed;
    private TransferStatus last = TransferStatus.PENDING;
    private TransferException failure;

    NativeRequest(long pointer) {
        this.pointer = pointer;
        this.backend = Backend.fromBit(NativeBridge.requestBackend(pointer));
        long p = pointer;
        this.cleanable = CLEANER.register(this, () -> NativeBridge.requestRelease(p));
    }

    /** Returns false when closed; otherwise the caller must call {@link #leave()}. */
    private boolean enter() {
        synchronized (lock) {
            if (closed) {
                return false;
            }
            users++;
            return true;
        }
    }

    private void leave() {
        synchronized (lock) {
            if (--users == 0 && closed) {
                cleanable.clean();
            }
        }
    }

    private TransferStatus record(int nativeStatus) {
        TransferStatus s = TransferStatus.fromNative(nativeStatus);
        synchronized (lock) {
            if (s == TransferStatus.ERROR && failure == null) {
                failure = NativeBridge.requestError(pointer);
            }
            last = s;
        }
        return s;
    }

    @Override
    public TransferStatus status() {
        if (!enter()) {
            return last();
        }
        try {
            return record(NativeBridge.requestStatus(pointer));
        } finally {
            leave();
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public TransferStatus await(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (!enter()) {
            return last();
        }
        try {
            for (;;) {
                long left = deadline - System.nanoTime();
                TransferStatus s = record(NativeBridge.requestWait(pointer, Math.max(0, Math.min(left, WAIT_SLICE_NANOS))));
                if (s != TransferStatus.PENDING || left <= 0) {
                    return s;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        } finally {
            leave();
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public boolean cancel() {
        if (!enter()) {
            return false;
        }
        try {
            return NativeBridge.requestCancel(pointer);
        } finally {
            leave();
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public Optional<TransferException> failure() {
        if (status() != TransferStatus.ERROR) {
            return Optional.empty();
        }
        synchronized (lock) {
            return Optional.ofNullable(failure);
        }
    }

    @Override
    public Backend backend() {
        return backend;
    }

    private TransferStatus last() {
        synchronized (lock) {
            return last;
        }
    }

    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            if (users == 0) {
                cleanable.clean();
            }
        }
    }

    @Override
    public String toString() {
        return "NativeRequest[" + backend + ", " + last() + "]";
    }
}
