package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.SamplingOptions;
import io.flotilla.worker.engine.TokenLogprob;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The simulated engine's sampling: a synthetic language model and the request's sampling parameters
 * over it. Deterministic: the k-th generated token of a request is a pure function of its prompt,
 * stream seed, k, its sampling parameters and the tokens generated before it, so preemption,
 * recompute, batching and timing never change a request's output.
 *
 * <p><b>The synthetic model.</b> At output position k the distribution has support on
 * {@code K = min(32, vocab)} distinct candidate tokens {@code c_j = (b + j·s) mod vocab} ({@code b},
 * {@code s} drawn from the context seed and k, {@code s} coprime with the vocabulary) with logits
 * {@code α·(K − j)}, α = 0.35 (p(c_0) ≈ 0.30 at temperature 1). Every other token has no mass unless
 * {@code logit_bias} names it (it then joins with logit {@code 0 + bias}). The context seed depends on
 * the prompt only, so greedy output follows the prompt.
 *
 * <pre>
 * base        = request seed                          when the request has one
 *             = FNV-1a-64(prompt token ids, le32)    when temperature == 0
 *             = FNV-1a-64(utf8(request id))          otherwise
 * stream_seed = mix(engine seed XOR mix(base))
 * context     = mix(engine seed XOR mix(FNV-1a-64(prompt)) XOR 0x5DEECE66D)
 * u_k         = top 53 bits of mix(stream_seed + (k + 1)·0x9E3779B97F4A7C15) / 2^53
 * </pre>
 *
 * <p><b>Sampling</b>, in vLLM's order: logit bias, penalties (presence and frequency on output
 * tokens, repetition on prompt and output tokens), temperature, then top_k, min_p and top_p
 * truncation, and the token at {@code u_k} of the remaining distribution (sorted most likely first).
 * Temperature 0 takes the most likely token. Without any of these (temperature only) the token is
 * drawn from the geometric distribution in closed form, in O(1).
 *
 * <p><b>Log-probabilities</b> are those of the distribution it samples from, after bias, penalties
 * and temperature, before truncation (vLLM's {@code processed_logprobs}; temperature 0 reports at 1).
 *
 * <p><b>Forced replies</b> (scripted mode, structured output): the token at position {@code k <
 * reply.length} is {@code reply[k]} with log-probability 0, then the end-of-sequence token.
 */
public final class TokenSampler {

    /** Candidate tokens per position. */
    static final int CANDIDATES = 32;
    /** Logit step between consecutive candidates. */
    static final double ALPHA = 0.35;
    /** The simulated model's own temperature, for a request that leaves it unset (a real model's generation_config). */
    static final double DEFAULT_TEMPERATURE = 1.0;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    private static final long STEP_SALT = 0xD1B54A32D192ED03L;
    private static final long CONTEXT_SALT = 0x5DEECE66DL;

    private final long context;
    private final long streamSeed;
    private final int vocab;
    private final int eos;
    private final int candidates;
    private final double temperature;
    private final SamplingOptions options;
    private final boolean ignoreEos;
    private final int[] forced;
    private final boolean plain;
    private final int topLogprobs;
    private final boolean logprobs;
    private Map<Integer, Integer> outputCounts;
    private int counted;
    private Set<Integer> promptTokens;
    private TokenLogprob last;

    private TokenSampler(EngineRequest request, long streamSeed, SimEngineConfig config, int[] forced) {
        this.context = KvPattern.mix(config.seed() ^ KvPattern.mix(fnv(request.promptTokens())) ^ CONTEXT_SALT);
        this.streamSeed = streamSeed;
        this.vocab = config.vocabSize();
        this.eos = config.eosTokenId();
        this.candidates = Math.min(CANDIDATES, vocab);
        this.temperature = request.temperatureOr(DEFAULT_TEMPERATURE);
        this.options = request.options();
        this.ignoreEos = request.ignoreEos();
        this.forced = forced;
        this.plain = !options.shapesDistribution();
        this.logprobs = options.logprobs();
        this.topLogprobs = options.topLogprobs();
    }

    /**
     * The sampler of one request.
     *
     * @param forced the reply the request must produce (scripted or structured), or null
     */
    static TokenSampler of(EngineRequest request, long streamSeed, SimEngineConfig config, int[] forced) {
        return new TokenSampler(request, streamSeed, config, forced);
    }

    /** The stream seed of {@code request} on an engine configured with {@code engineSeed}. */
    public static long streamSeed(EngineRequest request, long engineSeed) {
        long base;
        if (request.seed() != null) {
            base = request.seed();
        } else if (request.temperatureOr(DEFAULT_TEMPERATURE) == 0) {
            base = fnv(request.promptTokens());
        } else {
            base = fnv(request.requestId().getBytes(StandardCharsets.UTF_8));
        }
        return KvPattern.mix(engineSeed ^ KvPattern.mix(base));
    }

    /** The token at output position {@code seq.generated}; its log-probability is then {@link #lastLogprob()}. */
    int next(Sequence seq) {
        int k = seq.generated;
        last = null;
        if (forced != null && k <= forced.length && (k < forced.length || !ignoreEos)) {
            int token = k < forced.length ? forced[k] : eos;
            if (logprobs) {
                last = new TokenLogprob(0f, topLogprobs > 0 ? new int[] {token} : null,
                        topLogprobs > 0 ? new float[] {0f} : null);
            }
            return token;
        }
        long base = KvPattern.mix(context + (k + 1L) * GOLDEN);
        int b0 = (int) Long.remainderUnsigned(base, vocab);
        int step = coprimeStep(KvPattern.mix(base ^ STEP_SALT));
        double u = (KvPattern.mix(streamSeed + (k + 1L) * GOLDEN) >>> 11) * 0x1.0p-53;
        return plain ? plainToken(b0, step, u) : processedToken(seq, b0, step, u);
    }

    /** The log-probability of the token {@link #next} returned last, or null when not asked for. */
    TokenLogprob lastLogprob() {
        return last;
    }

    /** The k-th candidate of a position: distinct for k below the vocabulary size. */
    private int candidate(int b0, int step, int j) {
        return (int) ((b0 + (long) j * step) % vocab);
    }

    private int coprimeStep(long h) {
        if (vocab == 1) {
            return 0;
        }
        int step = 1 + (int) Long.remainderUnsigned(h, vocab - 1);
        while (gcd(step, vocab) != 1) {
            step = step % (vocab - 1) + 1;
        }
        return step;
    }

    /** Temperature only: the geometric distribution p_j ∝ r^j, r = e^(−α/T), drawn by inverse CDF. */
    private int plainToken(int b0, int step, double u) {
        int j;
        if (temperature == 0) {
            j = 0;
        } else {
            double r = Math.exp(-ALPHA / temperature);
            if (r == 0) {
                j = 0;
            } else if (r > 1 - 1e-12) {
                j = (int) (u * candidates);
            } else {
                double mass = -Math.expm1(candidates * Math.log(r)); // 1 − r^K
                j = (int) Math.floor(Math.log1p(-u * mass) / Math.log(r));
            }
            j = Math.max(0, Math.min(candidates - 1, j));
        }
        if (logprobs) {
            double t = temperature > 0 ? temperature : 1;
            double lnR = -ALPHA / t;
            double lse = Math.log(-Math.expm1(candidates * lnR)) - Math.log(-Math.expm1(lnR)); // ln Σ r^j
            int n = Math.min(topLogprobs, candidates);
            int[] ids = new int[n];
            float[] lps = new float[n];
            for (int i = 0; i < n; i++) {
                ids[i] = candidate(b0, step, i);
                lps[i] = (float) (i * lnR - lse);
            }
            last = new TokenLogprob((float) (j * lnR - lse), ids, lps);
        }
        return candidate(b0, step, j);
    }

    /** Bias, penalties, temperature, truncation: over the candidates and the biased tokens. */
    private int processedToken(Sequence seq, int b0, int step, double u) {
        Map<Integer, Double> bias = options.logitBias();
        int n = candidates;
        int[] ids = new int[candidates + bias.size()];
        double[] logits = new double[ids.length];
        Map<Integer, Integer> index = bias.isEmpty() ? null : new HashMap<>();
        for (int j = 0; j < candidates; j++) {
            ids[j] = candidate(b0, step, j);
            logits[j] = ALPHA * (candidates - j);
            if (index != null) {
                index.put(ids[j], j);
            }
        }
        if (index != null) {
            for (Map.Entry<Integer, Double> e : bias.entrySet()) {
                Integer at = index.get(e.getKey());
                if (at == null) {
                    ids[n] = e.getKey();
                    logits[n] = e.getValue();
                    n++;
                } else {
                    logits[at] += e.getValue();
                }
            }
        }
        penalize(seq, ids, logits, n);
        double t = temperature > 0 ? temperature : 1;
        Integer[] order = new Integer[n];
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            order[i] = i;
            max = Math.max(max, logits[i]);
        }
        java.util.Arrays.sort(order, (a, b) -> logits[a] != logits[b] ? Double.compare(logits[b], logits[a])
                : Integer.compare(a, b));
        double[] p = new double[n];
        double z = 0;
        for (int i = 0; i < n; i++) {
            p[i] = Math.exp((logits[order[i]] - max) / t);
            z += p[i];
        }
        double lnZ = Math.log(z) + max / t;
        int chosen;
        if (temperature == 0) {
            chosen = order[0];
        } else {
            int keep = truncate(p, z, n);
            double kept = 0;
            for (int i = 0; i < keep; i++) {
                kept += p[i];
            }
            double target = u * kept;
            int pick = keep - 1;
            double acc = 0;
            for (int i = 0; i < keep; i++) {
                acc += p[i];
                if (target < acc) {
                    pick = i;
                    break;
                }
            }
            chosen = order[pick];
        }
        if (logprobs) {
            int top = Math.min(topLogprobs, n);
            int[] topIds = new int[top];
            float[] topLps = new float[top];
            for (int i = 0; i < top; i++) {
                topIds[i] = ids[order[i]];
                topLps[i] = (float) (logits[order[i]] / t - lnZ);
            }
            last = new TokenLogprob((float) (logits[chosen] / t - lnZ), topIds, topLps);
        }
        return ids[chosen];
    }

    /** How many of the sorted probabilities {@code p} (summing to {@code z}) top_k, min_p and top_p keep; at least 1. */
    private int truncate(double[] p, double z, int n) {
        int keep = options.effectiveTopK() > 0 ? Math.min(n, options.effectiveTopK()) : n;
        if (options.effectiveMinP() > 0) {
            double floor = options.effectiveMinP() * p[0];
            int k = 1;
            while (k < keep && p[k] >= floor) {
                k++;
            }
            keep = k;
        }
        if (options.topPActive()) {
            double acc = 0;
            int k = 0;
            while (k < keep) {
                acc += p[k++];
                if (acc >= options.effectiveTopP() * z) {
                    break;
                }
            }
            keep = Math.max(1, k);
        }
        return keep;
    }

    /** OpenAI's presence and frequency penalties on output tokens, vLLM's repetition penalty on prompt and output. */
    private void penalize(Sequence seq, int[] ids, double[] logits, int n) {
        boolean additive = options.effectivePresencePenalty() != 0 || options.effectiveFrequencyPenalty() != 0;
        boolean repetition = options.repetitionPenaltyActive();
        if (!additive && !repetition) {
            return;
        }
        if (outputCounts == null) {
            outputCounts = new HashMap<>();
        }
        for (; counted < seq.generated; counted++) {
            outputCounts.merge(seq.tokenAt(seq.promptLength + counted), 1, Integer::sum);
        }
        if (repetition && promptTokens == null) {
            promptTokens = new HashSet<>();
            for (int i = 0; i < seq.promptLength; i++) {
                promptTokens.add(seq.tokenAt(i));
            }
        }
        for (int i = 0; i < n; i++) {
            int count = outputCounts.getOrDefault(ids[i], 0);
            if (repetition && (count > 0 || promptTokens.contains(ids[i]))) {
                double rp = options.effectiveRepetitionPenalty();
                logits[i] = logits[i] > 0 ? logits[i] / rp : logits[i] * rp;
            }
            if (count > 0) {
                logits[i] -= options.effectivePresencePenalty() + options.effectiveFrequencyPenalty() * count;
            }
        }
    }

    private static int gcd(int a, int b) {
        while (b != 0) {
            int t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    static long fnv(int[] tokens) {
        long h = 0xcbf29ce484222325L;
        for (int t : tokens) {
            for (int shift = 0; shift < 32; shift += 8) {
                h ^= (t >>> shift) & 0xff;
                h *= 0x100000001b3L;
            }
        }
        return h;
    }

    private static long fnv(byte[] bytes) {
        long h = 0xcbf29ce484222325L;
        for (byte b : bytes) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }
}
