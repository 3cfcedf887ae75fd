package io.flotilla.transfer;

import java.time.Duration;
import java.util.Optional;

/** A request of the Java engine: a small monitor-guarded state machine, run by one worker. */
final class JavaRequest implements TransferRequest {

    private TransferStatus status = TransferStatus.PENDING;
    private TransferException failure;
    private boolean started;

    /** Called by the worker; false when the request was cancelled (or failed) before it started. */
    synchronized boolean start() {
        if (status != TransferStatus.PENDING) {
            return false;
        }
        started = true;
        return true;
    }

    synchronized void finish(TransferException error) {
        if (status != TransferStatus.PENDING) {
            return;
        }
        status = error == null ? TransferStatus.DONE : TransferStatus.ERROR;
        failure = error;
        notifyAll();
    }

    @Override
    public synchronized TransferStatus status() {
        return status;
    }

    @Override
    public synchronized TransferStatus await(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (status == TransferStatus.PENDING) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            wait(left / 1_000_000, (int) (left % 1_000_000));
        }
        return status;
    }

    @Override
    public synchronized boolean cancel() {
        if (started || status != TransferStatus.PENDING) {
            return false;
        }
        finish(new TransferException(ErrorCode.CANCELLED, "request cancelled before it started"));
        return true;
    }

    @Override
    public synchronized Optional<TransferException> failure() {
        return Optional.ofNullable(failure);
    }

    @Override
    public Backend backend() {
        return Backend.TCP;
    }

    @Override
    public void close() {
        // nothing native to release; a pending request keeps running
    }

    @Override
    public synchronized String toString() {
        return "JavaRequest[" + status + "]";
    }
}
