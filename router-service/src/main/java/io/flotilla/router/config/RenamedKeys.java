package io.flotilla.router.config;

import io.flotilla.boot.config.KeyRenames;
import org.springframework.core.env.Environment;

/**
 * The router's settings that moved into groups ({@link KeyRenames}: one still set stops the router with its new name).
 */
final class RenamedKeys {

    private static final KeyRenames RENAMED = KeyRenames.under("flotilla.router", "docs/configuration.md lists the router's keys",
            "indexer-address", "indexer.address",
            "indexer-addresses", "indexer.addresses",
            "indexer-deadline", "indexer.deadline.fixed",
            "indexer-deadline-min", "indexer.deadline.min",
            "indexer-deadline-max", "indexer.deadline.max",
            "indexer-deadline-quantile", "indexer.deadline.quantile",
            "indexer-deadline-margin", "indexer.deadline.margin",
            "indexer-deadline-window", "indexer.deadline.window",
            "weight-prefill", "weights.prefill",
            "weight-decode", "weights.decode",
            "weight-queue", "weights.queue",
            "busy-prefill-fraction", "busy.prefill-fraction",
            "busy-decode-fraction", "busy.decode-fraction",
            "sequence-ttl", "sequences.ttl",
            "approx-ttl", "sequences.approx-ttl",
            "capacity-coalesce", "capacity.coalesce",
            "capacity-heartbeat", "capacity.heartbeat",
            "candidate-pruning", "candidates.pruning",
            "candidate-least-loaded", "candidates.least-loaded");

    private RenamedKeys() {
    }

    static void check(Environment environment) {
        RENAMED.check(environment);
    }
}
