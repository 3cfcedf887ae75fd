package io.flotilla.worker.engine.llamacpp;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

import java.util.function.ToDoubleFunction;

/** The llama.cpp engine's meters ({@code flotilla_worker_llama_*}), with the worker's tags. */
public final class LlamaCppMeters {

    private LlamaCppMeters() {
    }

    public static void bind(LlamaCppEngine engine, MeterRegistry registry, Tags tags) {
        LlamaCppCounters c = engine.counters();
        counter(registry, tags, "flotilla.worker.llama.prompt_tokens", "Prompt tokens of requests started", c,
                LlamaCppCounters::promptTokens);
        counter(registry, tags, "flotilla.worker.llama.predicted_reused_tokens",
                "Prompt tokens the cache mirror predicted the engine would take from its cache", c,
                LlamaCppCounters::predictedReused);
        counter(registry, tags, "flotilla.worker.llama.reused_tokens",
                "Prompt tokens the engine reported taking from its cache (kv cache rm), where its output was read", c,
                LlamaCppCounters::engineReused);
        counter(registry, tags, "flotilla.worker.llama.evaluated_tokens",
                "Prompt tokens the engine reported evaluating, where its output was read", c, LlamaCppCounters::evaluated);
        counter(registry, tags, "flotilla.worker.llama.generated_tokens", "Tokens generated and streamed", c,
                LlamaCppCounters::generated);
        counter(registry, tags, "flotilla.worker.llama.inexact_chunks",
                "Streamed chunks whose token ids were inferred from their bytes (several tokens held back together)", c,
                LlamaCppCounters::inexactChunks);
        FunctionCounter.builder("flotilla.worker.llama.mirror_checks", c, LlamaCppCounters::agree)
                .description("Requests whose engine reuse count was checked against the cache mirror").tags(tags)
                .tag("result", "agree").register(registry);
        FunctionCounter.builder("flotilla.worker.llama.mirror_checks", c, LlamaCppCounters::disagree)
                .description("Requests whose engine reuse count was checked against the cache mirror").tags(tags)
                .tag("result", "disagree").register(registry);
        FunctionCounter.builder("flotilla.worker.llama.mirror_checks", c, LlamaCppCounters::unchecked)
                .description("Requests whose engine reuse count was checked against the cache mirror").tags(tags)
                .tag("result", "unchecked").register(registry);
        Gauge.builder("flotilla.worker.llama.slots", engine, e -> e.settings().slots())
                .description("Parallel sequences of the engine").tags(tags).register(registry);
        Gauge.builder("flotilla.worker.llama.threads", engine, e -> e.settings().threads())
                .description("CPU threads of the engine").tags(tags).register(registry);
    }

    private static void counter(MeterRegistry registry, Tags tags, String name, String description, LlamaCppCounters c,
                                ToDoubleFunction<LlamaCppCounters> f) {
        FunctionCounter.builder(name, c, f).description(description).tags(tags).register(registry);
    }
}
