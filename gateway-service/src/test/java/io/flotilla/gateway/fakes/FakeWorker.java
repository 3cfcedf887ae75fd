package io.flotilla.gateway.fakes;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.protocol.v1.TokenLogprobs;
import io.flotilla.protocol.v1.Usage;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * WorkerService for tests. Generate streams one token per chunk from a fixed script: the k-th token
 * of a request (counted across workers, so a migrated request continues where it stopped) is
 * {@code script[k mod script.length]} (choice i of an n > 1 request starts i tokens further); it stops at
 * max_tokens (LENGTH) or after emitting a stop token id (STOP). {@link #reply} makes it answer a fixed
 * text instead. With {@code logprobs} every token carries {@link #logprobs}. A {@link Behaviour} makes it
 * fail with a status or hold the stream open after n tokens.
 */
public final class FakeWorker extends WorkerServiceGrpc.WorkerServiceImplBase {

    /**
     * @param failAfter    tokens to send before failing with {@code failStatus} (-1: never)
     * @param failStatus   the failure
     * @param holdAfter    tokens to send before holding the stream open until cancelled (-1: never)
     * @param cachedTokens usage.cached_tokens of the last chunk
     * @param prefillFails Prefill answers UNAVAILABLE instead of a handoff
     * @param refusesHandoff Generate ignores a handoff (prefills locally) and says why on its last chunk
     */
    public record Behaviour(int failAfter, Status failStatus, int holdAfter, int cachedTokens, boolean prefillFails,
                            boolean refusesHandoff) {
        public static final Behaviour NORMAL = new Behaviour(-1, null, -1, 0, false);

        public Behaviour(int failAfter, Status failStatus, int holdAfter, int cachedTokens, boolean prefillFails) {
            this(failAfter, failStatus, holdAfter, cachedTokens, prefillFails, false);
        }

        public static Behaviour handoffRefusing() {
            return new Behaviour(-1, null, -1, 0, false, true);
        }

        public static Behaviour failAfter(int n, Status status) {
            return new Behaviour(n, status, -1, 0, false);
        }

        public static Behaviour holdAfter(int n) {
            return new Behaviour(-1, null, n, 0, false);
        }

        public static Behaviour cached(int tokens) {
            return new Behaviour(-1, null, -1, tokens, false);
        }

        public static Behaviour prefillFailing() {
            return new Behaviour(-1, null, -1, 0, true);
        }
    }

    private final String id;
    private final int[] script;
    /** Prompt length of each request's first Generate, shared by every fake worker of the cluster. */
    private final Map<String, Integer> basePrompt;
    private volatile Behaviour behaviour = Behaviour.NORMAL;
    /** When set: the reply to a request (given its decoded prompt and itself), or null for the script. */
    private volatile java.util.function.BiFunction<String, GenerateRequest, String> replies;
    public final List<GenerateRequest> generates = new CopyOnWriteArrayList<>();
    public final List<PrefillRequest> prefills = new CopyOnWriteArrayList<>();
    public final List<String> held = new CopyOnWriteArrayList<>();
    public final List<String> cancelled = new CopyOnWriteArrayList<>();

    public FakeWorker(String id, int[] script, Map<String, Integer> basePrompt) {
        this.id = id;
        this.script = script.clone();
        this.basePrompt = basePrompt;
    }

    public String id() {
        return id;
    }

    public void behave(Behaviour behaviour) {
        this.behaviour = behaviour;
    }

    /** Answers every request with {@code text} (cl100k_base tokens), then STOP; null goes back to the script. */
    public void reply(String text) {
        this.replies = text == null ? null : (prompt, request) -> text;
    }

    /**
     * Answers each request with what {@code replies} says for its decoded prompt (and the request: its
     * sampling, its structured output), then STOP; a null answer falls back to the script.
     */
    public void replyBy(java.util.function.BiFunction<String, GenerateRequest, String> replies) {
        this.replies = replies;
    }

    private int[] scripted(GenerateRequest request) {
        var r = replies;
        if (r == null) {
            return null;
        }
        String text = r.apply(FakeCluster.decode(request.getTokenIdsList().stream().mapToInt(Integer::intValue).toArray()),
                request);
        return text == null ? null : FakeCluster.TOKENIZER.encode(text);
    }

    /** Length of a full fake embedding. */
    public static final int EMBEDDING_DIMENSIONS = 8;
    /** Every Embed request, in arrival order. */
    public final List<io.flotilla.protocol.v1.EmbedRequest> embeds = new CopyOnWriteArrayList<>();
    /** When set, Embed fails with it. */
    public volatile Status embedFailure;

    /**
     * The i-th value of an input's fake embedding before normalisation: {@code (sum of its ids) + i + 1}, so a test
     * can compute what to expect ({@link #embedding}).
     */
    public static float[] embedding(int[] ids, int dimensions) {
        long sum = 0;
        for (int id : ids) {
            sum += id;
        }
        double norm = 0;
        double[] v = new double[dimensions];
        for (int i = 0; i < dimensions; i++) {
            v[i] = sum + i + 1;
            norm += v[i] * v[i];
        }
        float[] out = new float[dimensions];
        for (int i = 0; i < dimensions; i++) {
            out[i] = (float) (v[i] / Math.sqrt(norm));
        }
        return out;
    }

    @Override
    public void embed(io.flotilla.protocol.v1.EmbedRequest request,
                      StreamObserver<io.flotilla.protocol.v1.EmbedResponse> observer) {
        embeds.add(request);
        Status failure = embedFailure;
        if (failure != null) {
            observer.onError(failure.asRuntimeException());
            return;
        }
        int dims = request.getDimensions() == 0 ? EMBEDDING_DIMENSIONS : request.getDimensions();
        var response = io.flotilla.protocol.v1.EmbedResponse.newBuilder().setWorkerId(id);
        int tokens = 0;
        for (var input : request.getInputsList()) {
            int[] ids = input.getTokenIdsList().stream().mapToInt(Integer::intValue).toArray();
            tokens += ids.length;
            var e = io.flotilla.protocol.v1.Embedding.newBuilder();
            for (float x : embedding(ids, dims)) {
                e.addValues(x);
            }
            response.addEmbeddings(e);
        }
        observer.onNext(response.setPromptTokens(tokens).build());
        observer.onCompleted();
    }

    public void clearRecords() {
        embeds.clear();
        embedFailure = null;
        replies = null;
        generates.clear();
        prefills.clear();
        held.clear();
        cancelled.clear();
    }

    @Override
    public void generate(GenerateRequest request, StreamObserver<GenerateChunk> observer) {
        generates.add(request);
        Behaviour b = behaviour;
        ServerCallStreamObserver<GenerateChunk> stream = (ServerCallStreamObserver<GenerateChunk>) observer;
        stream.setOnCancelHandler(() -> cancelled.add(request.getRequestId()));
        int base = basePrompt.computeIfAbsent(request.getRequestId(), k -> request.getTokenIdsCount());
        int offset = request.getTokenIdsCount() - base;
        int max = request.getStop().getMaxTokens();
        List<Integer> stops = request.getStop().getStopTokenIdsList();
        int[] scripted = scripted(request);
        int choices = Math.max(1, request.getN());
        for (int choice = 0; choice < choices; choice++) {
            int[] tokens = scripted != null ? scripted : script;
            boolean ended = false;
            for (int k = 0; k < max && !ended; k++) {
                if (k == b.failAfter()) {
                    observer.onError(b.failStatus().withDescription(id + " failed on purpose").asRuntimeException());
                    return;
                }
                if (k == b.holdAfter()) {
                    held.add(request.getRequestId());
                    return; // the stream stays open until the client cancels
                }
                if (scripted != null && k == scripted.length) {
                    finish(request, observer, FinishReason.FINISH_REASON_STOP, k, b, choice);
                    ended = true;
                    continue;
                }
                int token = scripted != null ? scripted[k] : tokens[(offset + k + choice) % tokens.length];
                GenerateChunk.Builder chunk = GenerateChunk.newBuilder().setWorkerId(id).addTokenIds(token).setChoice(choice)
                        .setHandoffUsed(request.hasHandoff() && !b.refusesHandoff());
                if (request.getSampling().getLogprobs()) {
                    chunk.addLogprobs(logprobs(token, request.getSampling().getTopLogprobs()));
                }
                observer.onNext(chunk.build());
                if (stops.contains(token)) {
                    finish(request, observer, FinishReason.FINISH_REASON_STOP, k + 1, b, choice);
                    ended = true;
                }
            }
            if (ended) {
                continue;
            }
            if (b.failAfter() == max) { // every token sent, then the worker dies before its last chunk
                observer.onError(b.failStatus().withDescription(id + " failed on purpose").asRuntimeException());
                return;
            }
            finish(request, observer, FinishReason.FINISH_REASON_LENGTH, max, b, choice);
        }
        observer.onCompleted();
    }

    /**
     * The fake's distribution: the token at -0.25, then alternatives {@code token + 1, token + 2, …} at -1.5, -2.5, …
     * (the token itself first among them).
     */
    public static TokenLogprobs logprobs(int token, int top) {
        TokenLogprobs.Builder b = TokenLogprobs.newBuilder().setLogprob(-0.25f);
        for (int i = 0; i < top; i++) {
            b.addTopTokenIds(i == 0 ? token : token + i).addTopLogprobs(i == 0 ? -0.25f : -0.5f - i);
        }
        return b.build();
    }

    private void finish(GenerateRequest request, StreamObserver<GenerateChunk> observer, FinishReason reason,
                        int generated, Behaviour b, int choice) {
        observer.onNext(GenerateChunk.newBuilder()
                .setWorkerId(id)
                .setChoice(choice)
                .setFinishReason(reason)
                .setHandoffUsed(request.hasHandoff() && !b.refusesHandoff())
                .setHandoffRefusedReason(request.hasHandoff() && b.refusesHandoff() ? "handoff refused (kv_layout)" : "")
                .setUsage(Usage.newBuilder()
                        .setPromptTokens(request.getTokenIdsCount())
                        .setCachedTokens(b.cachedTokens())
                        .setCompletionTokens(generated))
                .build());
    }

    @Override
    public void prefill(PrefillRequest request, StreamObserver<PrefillResult> observer) {
        prefills.add(request);
        if (behaviour.prefillFails()) {
            observer.onError(Status.UNAVAILABLE.withDescription(id + " cannot prefill").asRuntimeException());
            return;
        }
        observer.onNext(PrefillResult.newBuilder()
                .setHandoff(KvHandoff.newBuilder()
                        .setSourceWorkerId(id)
                        .setModel(request.getModel())
                        .setComputedTokens(request.getTokenIdsCount())
                        .setLeaseId("lease-" + request.getRequestId()))
                .setUsage(Usage.newBuilder().setPromptTokens(request.getTokenIdsCount()).setCachedTokens(7))
                .build());
        observer.onCompleted();
    }
}
