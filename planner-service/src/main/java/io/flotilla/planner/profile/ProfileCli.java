package io.flotilla.planner.profile;

import io.flotilla.planner.model.PerformanceProfile;
import io.flotilla.planner.model.ProfileJson;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * {@code bin/flotilla profile}: sweeps a running cluster through its gateway and writes a planner
 * profile (JSON, see {@code ProfileJson}). Run it against a cluster with one worker of the kind to
 * profile (or pass {@code --replicas}); the prompts are random token ids, so the prefix cache never helps.
 * Then start the planner with {@code --flotilla.planner.profile=<file>}.
 */
@Command(name = "profile", mixinStandardHelpOptions = true,
        description = "Measure TTFT and ITL against a running cluster and write a planner performance profile.")
public final class ProfileCli implements Callable<Integer> {

    @Option(names = "--gateway", defaultValue = "http://127.0.0.1:8000", description = "Gateway base URL (${DEFAULT-VALUE}).")
    URI gateway;
    @Option(names = "--model", defaultValue = "flotilla-sim", description = "Model to profile (${DEFAULT-VALUE}).")
    String model;
    @Option(names = "--out", defaultValue = "profile.json", description = "Profile file to write (${DEFAULT-VALUE}).")
    Path out;
    @Option(names = "--isl", split = ",", defaultValue = "128,512,2048,8192,16384", description = "Prefill sweep prompt lengths.")
    double[] isl;
    @Option(names = "--prefill-concurrency", split = ",", defaultValue = "1,2,4,8,16", description = "Prefill sweep concurrencies.")
    double[] prefillConcurrency;
    @Option(names = "--context", split = ",", defaultValue = "512,2048,8192", description = "Decode sweep context lengths.")
    double[] context;
    @Option(names = "--decode-concurrency", split = ",", defaultValue = "1,4,16,64", description = "Decode sweep concurrencies.")
    double[] decodeConcurrency;
    @Option(names = "--decode-tokens", defaultValue = "64", description = "Tokens per decode-sweep request (${DEFAULT-VALUE}).")
    int decodeTokens;
    @Option(names = "--requests", defaultValue = "16", description = "Requests per sweep point, at least its concurrency (${DEFAULT-VALUE}).")
    int requests;
    @Option(names = "--replicas", defaultValue = "1", description = "Workers serving the sweep (${DEFAULT-VALUE}).")
    int replicas;
    @Option(names = "--kv-tokens", defaultValue = "131072", description = "KV capacity of one worker in tokens (${DEFAULT-VALUE}).")
    long kvTokens;
    @Option(names = "--max-concurrency", defaultValue = "256", description = "Most running requests per worker (${DEFAULT-VALUE}).")
    int maxConcurrency;
    @Option(names = "--timeout", defaultValue = "PT120S", description = "Timeout of one request (${DEFAULT-VALUE}).")
    Duration timeout;
    @Option(names = "--seed", defaultValue = "1", description = "Seed of the random prompts (${DEFAULT-VALUE}).")
    long seed;
    @Option(names = "--vocab-size", paramLabel = "N",
            description = "Draw prompt token ids from [0, N), for a model with a small vocabulary (default: ids 1000-49999).")
    Integer vocabSize;

    public static void main(String[] args) {
        System.exit(new CommandLine(new ProfileCli()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        ProfileSweep sweep = new ProfileSweep(isl, prefillConcurrency, context, decodeConcurrency, decodeTokens, requests,
                replicas, kvTokens, maxConcurrency);
        CompletionsClient client = new CompletionsClient(gateway, model, timeout, System::nanoTime);
        LoadPoint runner = vocabSize == null ? new ClosedLoopRunner(client, seed)
                : new ClosedLoopRunner(client, seed, 0, vocabSize);
        PerformanceProfile profile = sweep.run(model + " via " + gateway, runner, System.out::println);
        ProfileJson.write(profile, out);
        System.out.println("wrote " + out.toAbsolutePath());
        return 0;
    }
}
