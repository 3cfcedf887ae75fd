package io.flotilla.planner.profile;

/** Sends one completion and measures it (port: the gateway over HTTP, or a fake). Thread-safe. */
public interface CompletionProbe {

    /** Streams a completion of {@code prompt} (token ids), exactly {@code maxTokens} long (ignore_eos). */
    Measurement measure(int[] prompt, int maxTokens);
}
