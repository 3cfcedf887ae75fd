package io.flotilla.worker.engine;

/** References that keep blocks resident and unchanged until released. */
public interface KvPin {

    /** Drops the references (the blocks stay cached until evicted). Idempotent; thread-safe. */
    void release();

    boolean released();
}
