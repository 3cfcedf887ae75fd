package io.flotilla.indexer.core;

import java.util.Optional;

/**
 * The result of giving the applier one input: what it did, and whether the shell must now fetch a
 * snapshot from a worker.
 */
public record Outcome(Verdict verdict, Optional<ReconcileRequest> reconcile) {

    static final Outcome APPLIED = new Outcome(Verdict.APPLIED, Optional.empty());
    static final Outcome BUFFERED = new Outcome(Verdict.BUFFERED, Optional.empty());
    static final Outcome DUPLICATE = new Outcome(Verdict.DUPLICATE, Optional.empty());
    static final Outcome STALE = new Outcome(Verdict.STALE, Optional.empty());
    static final Outcome IGNORED = new Outcome(Verdict.IGNORED, Optional.empty());

    static Outcome of(Verdict verdict, ReconcileRequest request) {
        return new Outcome(verdict, Optional.of(request));
    }
}
