package io.flotilla.gateway.generation;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.Usage;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Everything the gateway learned about one request while serving it, across workers: the tokens
 * generated so far (the migration state), which workers served it, timings and usage. Written by the
 * request's reactive chain (one signal at a time) and read when it ends, possibly from another
 * thread; hence the methods are synchronized.
 */
public final class RequestProgress {

    private final Instant arrived;
    private int[] generated = new int[16];
    private int generatedCount;
    private final List<String> excluded = new ArrayList<>();
    private String worker = "";
    private String firstWorker = "";
    private String prefillWorker = "";
    private int migrations;
    private Instant firstTokenAt;
    private Instant lastTokenAt;
    private int workerCachedTokens;
    private int prefillCachedTokens;
    private boolean handoffUsed;
    /** Some worker said it continued from the prefill worker's handoff (handoff_used on any chunk). */
    private boolean handoffSeen;
    private boolean booked;
    private boolean attemptFinished;
    private String finishReason;
    private ApiError streamedError;
    private boolean responseStarted;
    private boolean abandoned;

    public RequestProgress(Instant arrived) {
        this.arrived = arrived;
    }

    public Instant arrived() {
        return arrived;
    }

    /** The prompt followed by every token generated so far: what a new worker continues from. */
    synchronized int[] context(int[] prompt) {
        int[] out = Arrays.copyOf(prompt, prompt.length + generatedCount);
        System.arraycopy(generated, 0, out, prompt.length, generatedCount);
        return out;
    }

    public synchronized int generatedCount() {
        return generatedCount;
    }

    /**
     * A Route call is about to be sent: from now on the router may hold a booking (even if the call
     * is cancelled or times out), so the request's end must release it.
     */
    synchronized void routing() {
        booked = true;
    }

    /** The router answered busy or with no worker: it booked nothing. */
    synchronized void notBooked() {
        booked = false;
    }

    synchronized void routedTo(String workerId) {
        worker = workerId;
        attemptFinished = false;
    }

    synchronized void prefilledBy(String workerId, int cachedTokens) {
        prefillWorker = workerId;
        prefillCachedTokens = cachedTokens;
    }

    synchronized void migrating(String failedWorker) {
        excluded.add(failedWorker);
        migrations++;
        booked = false;
    }

    synchronized List<String> excluded() {
        return List.copyOf(excluded);
    }

    /** Records a chunk's tokens and, on the last chunk, its usage. */
    synchronized void onChunk(GenerateChunk chunk, Instant now) {
        int n = chunk.getTokenIdsCount();
        if (n > 0) {
            if (generatedCount + n > generated.length) {
                generated = Arrays.copyOf(generated, Math.max(generated.length * 2, generatedCount + n));
            }
            for (int i = 0; i < n; i++) {
                generated[generatedCount++] = chunk.getTokenIds(i);
            }
            if (firstTokenAt == null) {
                firstTokenAt = now;
                firstWorker = worker;
            }
            lastTokenAt = now;
        }
        if (chunk.getHandoffUsed()) {
            handoffSeen = true;
        }
        if (chunk.hasUsage()) {
            Usage u = chunk.getUsage();
            workerCachedTokens = u.getCachedTokens();
            handoffUsed = chunk.getHandoffUsed();
        }
    }

    synchronized void attemptFinished() {
        attemptFinished = true;
    }

    synchronized boolean isAttemptFinished() {
        return attemptFinished;
    }

    /** The request reached its end as the client sees it ({@code stop} or {@code length}). */
    public synchronized void finished(String reason) {
        finishReason = reason;
    }

    public synchronized String finishReason() {
        return finishReason;
    }

    /** An error was sent to the client inside an already started stream. */
    public synchronized void streamedError(ApiError error) {
        streamedError = error;
    }

    public synchronized ApiError streamedError() {
        return streamedError;
    }

    /** Marks the first byte of the response body; returns true only the first time. */
    public synchronized boolean startResponse() {
        boolean first = !responseStarted;
        responseStarted = true;
        return first;
    }

    public synchronized boolean responseStarted() {
        return responseStarted;
    }

    /** The client went away (its response was cancelled) before the end. */
    public synchronized void abandoned() {
        abandoned = true;
    }

    public synchronized boolean isAbandoned() {
        return abandoned;
    }

    /** Whether the router may hold a booking for this request that must be released (Release is idempotent). */
    public synchronized boolean booked() {
        return booked;
    }

    /** The worker serving (or that last served) the request; empty before routing. */
    public synchronized String worker() {
        return worker;
    }

    /** The worker that produced the first token; empty before it. */
    public synchronized String firstWorker() {
        return firstWorker;
    }

    /**
     * The prefill worker whose KV handoff a decode worker used; empty when there was none, its
     * Prefill failed, or the decode worker refused the handoff and prefilled itself. Known from the
     * first chunk on (workers set {@code handoff_used} on every chunk).
     */
    public synchronized String prefillWorker() {
        return handoffSeen ? prefillWorker : "";
    }

    public synchronized int migrations() {
        return migrations;
    }

    public synchronized Instant firstTokenAt() {
        return firstTokenAt;
    }

    public synchronized Instant lastTokenAt() {
        return lastTokenAt;
    }

    /**
     * Prompt tokens found in a KV cache, capped at the prompt length: the prefill worker's count when
     * the decode worker used its handoff, else the last worker's (0 when no worker reported usage,
     * e.g. when a stop string ended the stream before the worker's last chunk).
     */
    public synchronized int cachedTokens(int promptTokens) {
        int cached = handoffUsed && !prefillWorker.isEmpty() ? prefillCachedTokens : workerCachedTokens;
        return Math.min(cached, promptTokens);
    }
}
