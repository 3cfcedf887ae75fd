package io.flotilla.gateway.output;

import io.flotilla.gateway.generation.RequestEvent;
import io.flotilla.gateway.reasoning.ReasoningParser;
import io.flotilla.gateway.reasoning.ReasoningStream;
import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import io.flotilla.gateway.tokenize.IncrementalDetokenizer;
import io.flotilla.gateway.toolcall.HermesToolParser;
import io.flotilla.gateway.toolcall.ToolCallParser;
import io.flotilla.gateway.toolcall.ToolCallSink;
import io.flotilla.gateway.toolcall.ToolCallStream;
import io.flotilla.gateway.toolcall.ToolCallIds;
import io.flotilla.protocol.v1.FinishReason;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Cost per generated token of reading a streamed output: a Qwen-style answer (a think block, a
 * sentence, two Hermes tool calls) in cl100k tokens, one token per delta as a worker streams it.
 * <ul>
 *   <li>{@code parsers}: the reasoning split and the tool-call parse alone, on each token's text;</li>
 *   <li>{@code choice}: one choice's whole output path in the gateway — decoding, stop strings,
 *       reasoning, tool calls, the deltas the responder renders ({@link ResponseAssembler});</li>
 *   <li>{@code plainChoice}: the same path for the same tokens without any parser, for comparison.</li>
 * </ul>
 * Scores are microseconds per token (one invocation streams the whole output).
 *
 * <pre>
 * java -cp &lt;classpath&gt; org.openjdk.jmh.Main OutputParsingBenchmark -f 1 -wi 3 -i 5 -w 1s -r 2s
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class OutputParsingBenchmark {

    static final String OUTPUT = "<think>\nThe user asks about two SDKs. I should look up each one's quality with the tool, "
            + "then summarise what reviewers say. Start with the OpenAI Java SDK, then the Unknown Company SDK.\n</think>\n\n"
            + "Let me look them up.\n"
            + "<tool_call>\n{\"name\": \"GetSdkQuality\", \"arguments\": {\"name\": \"OpenAI Java SDK\"}}\n</tool_call>\n"
            + "<tool_call>\n{\"name\": \"GetSdkQuality\", \"arguments\": {\"name\": \"Unknown Company SDK\"}}\n</tool_call>";
    /** cl100k tokens of {@link #OUTPUT}; checked in {@link #setup}. */
    static final int TOKENS = 108;

    private int[] ids;
    private String[] pieces;
    private ResponseShape parsed;
    private ResponseShape plain;
    private final ToolCallParser hermes = new HermesToolParser();

    @Setup
    public void setup() {
        Cl100kTokenizer tokenizer = new Cl100kTokenizer();
        ids = tokenizer.encode(OUTPUT);
        if (ids.length != TOKENS) {
            throw new IllegalStateException("the output is " + ids.length + " tokens, not " + TOKENS);
        }
        IncrementalDetokenizer d = new IncrementalDetokenizer(tokenizer);
        List<String> out = new ArrayList<>();
        for (int id : ids) {
            out.add(d.push(new int[] {id}));
        }
        pieces = out.toArray(String[]::new);
        ModelOutput model = ModelOutput.of(tokenizer, hermes, ReasoningParser.QWEN3);
        parsed = new ResponseShape(1, true, List.of(), model, ReasoningParser.QWEN3,
                () -> hermes.stream(ToolCallIds.openAi()), true, false, false, 0);
        plain = new ResponseShape(1, true, List.of(), ModelOutput.of(tokenizer, null, null), null, null, true, false,
                false, 0);
    }

    @Benchmark
    @OperationsPerInvocation(TOKENS)
    public void parsers(Blackhole bh) {
        Sinks sinks = new Sinks(bh);
        ReasoningStream reasoning = ReasoningParser.QWEN3.stream();
        ToolCallStream tools = hermes.stream(ToolCallIds.openAi());
        sinks.tools = tools;
        for (String piece : pieces) {
            reasoning.push(piece, sinks);
        }
        reasoning.finish(sinks);
        tools.finish(sinks);
    }

    @Benchmark
    @OperationsPerInvocation(TOKENS)
    public void choice(Blackhole bh) {
        stream(parsed, bh);
    }

    @Benchmark
    @OperationsPerInvocation(TOKENS)
    public void plainChoice(Blackhole bh) {
        stream(plain, bh);
    }

    private void stream(ResponseShape shape, Blackhole bh) {
        ResponseAssembler a = shape.assembler();
        for (int id : ids) {
            bh.consume(a.apply(new RequestEvent.Tokens(0, new int[] {id}, List.of(), Instant.EPOCH, false, null)));
        }
        bh.consume(a.apply(new RequestEvent.Finished(0, FinishReason.FINISH_REASON_STOP, true)));
    }

    /** Reasoning text is consumed; content goes on to the tool parse, whose output is consumed. */
    private static final class Sinks implements ReasoningStream.Sink, ToolCallSink {
        private final Blackhole bh;
        ToolCallStream tools;

        Sinks(Blackhole bh) {
            this.bh = bh;
        }

        @Override
        public void reasoning(String text) {
            bh.consume(text);
        }

        @Override
        public void content(String text) {
            if (tools != null) {
                ToolCallStream t = tools;
                tools = null; // content the tool parse lets through comes back here: consume it
                t.push(text, this);
                tools = t;
            } else {
                bh.consume(text);
            }
        }

        @Override
        public void callStarted(int index, String id, String name) {
            bh.consume(name);
        }

        @Override
        public void callArguments(int index, String fragment) {
            bh.consume(fragment);
        }
    }
}
