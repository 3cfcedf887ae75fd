package io.flotilla.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

/**
 * {@code bin/flotilla bench …}: replays a trace or a synthetic workload against the gateway and writes
 * {@code requests.csv}, {@code summary.json} and {@code report.html}; {@code bench compare} repeats a
 * workload once per router mode.
 */
@Command(name = "flotilla bench", mixinStandardHelpOptions = true, sortOptions = false, usageHelpWidth = 120,
        subcommands = CompareCommand.class,
        description = "Load generator and trace replay for the Flotilla gateway (OpenAI /v1/completions, token-id prompts, "
                + "streaming). Writes requests.csv, summary.json and report.html to --out.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  bin/flotilla bench --trace bench/src/test/resources/mooncake-sample.jsonl --speedup 2",
            "  bin/flotilla bench --groups 16 --prompts-per-group 32 --prefix-len 2048 --rate 20 --arrival bursty",
            "  bin/flotilla bench --sessions 50 --turns 6 --think-time-ms 2000 --slo-ttft-ms 500 --slo-itl-ms 50",
            "  bin/flotilla bench --trace trace.jsonl --speedup 20 --queue-timeout 300s",
            "  bin/flotilla bench --groups 100000 --prompts-per-group 1 --prefix-len 2048 --arrival bursty --rate 36 --load-factor 4 \\",
            "      --queue-timeout 0 --tenants heavy:10,light:1 --priority interactive:1,batch:3 --slo-ttft-ms 5000",
            "  bin/flotilla bench compare --modes round-robin,load,kv --trace trace.jsonl --max-requests 2000 --warmup 16"},
        exitCodeOnExecutionException = 1)
public final class BenchCli implements Callable<Integer> {

    @Option(names = "--disagg-hint", paramLabel = "off|auto",
            description = "Send 'x-flotilla-disagg: off|auto'.")
    String disaggHint;

    @Mixin
    WorkloadOptions workload;

    @Mixin
    RunOptions options;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new BenchCli());
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            cmd.getErr().println("flotilla bench: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            return cmd.getExitCodeExceptionMapper() != null ? cmd.getExitCodeExceptionMapper().getExitCode(e) : 1;
        });
        return cl;
    }

    @Override
    public Integer call() throws Exception {
        if (disaggHint != null && !disaggHint.equals("off") && !disaggHint.equals("auto")) {
            throw new IllegalArgumentException("--disagg-hint must be off or auto");
        }
        workload.build(options.seed).close();
        BenchSession session = new BenchSession(workload, options, System.out, System.err);
        session.warmup();
        session.run("run", disaggHint, session.routerMode(), options.outDir());
        return 0;
    }
}
