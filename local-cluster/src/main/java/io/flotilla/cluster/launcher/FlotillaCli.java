package io.flotilla.cluster.launcher;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code bin/flotilla}: start, inspect and stop the local cluster. */
@Command(name = "flotilla", mixinStandardHelpOptions = true, version = "flotilla 0.1.0",
        description = "Runs a local Flotilla cluster: a real Kafka broker and every service as its own JVM.",
        subcommands = {FlotillaCli.Up.class, FlotillaCli.Down.class, FlotillaCli.Status.class, KafkaCommand.class,
                FlotillaCli.KillWorker.class, FlotillaCli.StartWorker.class, FlotillaCli.KillRouter.class,
                FlotillaCli.StartRouter.class, FlotillaCli.CheckIdle.class,
                ModelCommand.class})
public final class FlotillaCli {

    static Path home() {
        return Path.of(System.getProperty("flotilla.home", ".")).toAbsolutePath().normalize();
    }

    /** Where bin/flotilla was run (it changes to the repository root): relative paths on its command line are relative to it. */
    static Path workingDir() {
        return Path.of(System.getProperty("flotilla.cwd", System.getProperty("user.dir"))).toAbsolutePath().normalize();
    }

    /**
     * Where the cluster's state, logs and tiers live: {@code <home>/.flotilla}, or the {@code flotilla.state-dir}
     * property (tests that run the launcher's own commands keep their state apart from a developer's cluster).
     */
    static Path stateDir() {
        String dir = System.getProperty("flotilla.state-dir");
        return dir == null ? home().resolve(".flotilla") : Path.of(dir).toAbsolutePath().normalize();
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs one command line as {@code bin/flotilla} does, without exiting; its exit status. */
    public static int execute(String... args) {
        CommandLine cli = new CommandLine(new FlotillaCli());
        cli.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            if (ex instanceof LauncherException) {
                cmd.getErr().println("flotilla: " + ex.getMessage());
                return 1;
            }
            throw ex;
        });
        return cli.execute(args);
    }

    @Command(name = "up", description = "Start Kafka (unless --kafka) and every service; wait until all are healthy.")
    static final class Up implements Callable<Integer> {
        @Option(names = {"-d", "--detach"}, description = "Return once the cluster is up and leave it running.")
        boolean detach;
        @Option(names = "--workers", description = "Aggregated simulated workers (default 2).")
        Integer workers;
        @Option(names = "--fleet", paramLabel = "N",
                description = "N simulated workers instead of --workers, --fleet-per-jvm to a worker JVM, each binding a free "
                        + "gRPC port; engines without KV payloads (for routing and membership at scale).")
        Integer fleet;
        @Option(names = "--fleet-per-jvm", paramLabel = "K",
                description = "With --fleet: workers per worker JVM (default " + FleetOptions.DEFAULT_PER_JVM + ").")
        Integer fleetPerJvm;
        @Option(names = "--indexer-shards", paramLabel = "N", defaultValue = "1",
                description = "N kv-indexer processes sharing the KV-event partitions as one Kafka consumer group; every "
                        + "router asks all of them (default ${DEFAULT-VALUE}: one indexer).")
        int indexerShards;
        @Option(names = "--prefill", defaultValue = "0", description = "Prefill workers (P/D layout).")
        int prefill;
        @Option(names = "--decode", defaultValue = "0", description = "Decode workers (P/D layout).")
        int decode;
        @Option(names = "--router-mode", defaultValue = "kv", description = "kv, load, round-robin or random (default ${DEFAULT-VALUE}).")
        String routerMode;
        @Option(names = "--routers", defaultValue = "1",
                description = "Router replicas sharing bookings over Kafka; the gateway is given all of them (default ${DEFAULT-VALUE}).")
        int routers;
        @Option(names = "--kafka", paramLabel = "HOST:PORT", description = "Use this Kafka instead of starting one.")
        String kafka;
        @Option(names = "--kafka-config", paramLabel = "FILE",
                description = "Properties file of spring.kafka.* client settings (security.protocol, properties.sasl.*, ssl.*) "
                        + "every service imports, e.g. the client.properties `flotilla kafka` writes.")
        Path kafkaConfig;
        @Option(names = "--timeout", defaultValue = "180", description = "Seconds to wait for every service to be healthy.")
        int timeoutSeconds;
        @Option(names = "--sim-speedup", defaultValue = "1.0",
                description = "Simulated engines run this many times faster than their timing model (default ${DEFAULT-VALUE}).")
        double simSpeedup;
        @Option(names = "--planner", defaultValue = "shadow",
                description = "How the planner applies its decisions: shadow (record only) or local (starts and drains this cluster's workers; default ${DEFAULT-VALUE}).")
        String planner;
        @Option(names = "--planner-interval", paramLabel = "DURATION",
                description = "Planning interval: 500ms, 5s, 2m or seconds (default: the planner's, 30s).")
        String plannerInterval;
        @Option(names = "--planner-opt", paramLabel = "KEY=VALUE",
                description = "Any other flotilla.planner setting, e.g. scaling.min-hold=20s or aggregated.max=4 (repeatable).")
        List<String> plannerOpts = new java.util.ArrayList<>();
        @Option(names = "--engine", defaultValue = "sim",
                description = "Engine of every worker: sim (built-in simulation), openai-http (an external vLLM server per worker, OpenAI API), sglang (an external SGLang server per worker, native /generate API) or llama-cpp (llama.cpp in each worker's process, on the CPUs); default ${DEFAULT-VALUE}.")
        String engine;
        @Option(names = "--gguf", paramLabel = "FILE",
                description = "With --engine llama-cpp: the GGUF model every worker runs (default: the tiny model, generated once under .flotilla/models/tiny).")
        String gguf;
        @Option(names = "--slots", paramLabel = "N",
                description = "With --engine llama-cpp: parallel sequences per worker, each with its own prompt cache (default 2).")
        Integer slots;
        @Option(names = "--engine-threads", paramLabel = "N",
                description = "With --engine llama-cpp: CPU threads of each worker's engine (default 1).")
        Integer engineThreads;
        @Option(names = "--context-per-slot", paramLabel = "TOKENS",
                description = "With --engine llama-cpp: tokens one slot holds, prompt plus output (default 4096).")
        Integer contextPerSlot;
        @Option(names = "--engine-url", paramLabel = "URL[,URL...]",
                description = "With --engine openai-http or sglang: the engines' base URLs, one per worker, in worker order (prefill workers first).")
        String engineUrls;
        @Option(names = "--kv-events", paramLabel = "tcp://HOST:PORT[,...]",
                description = "The engines' ZMQ KV event endpoints, one per worker (vLLM --kv-events-config endpoint).")
        String kvEvents;
        @Option(names = "--kv-events-replay", paramLabel = "tcp://HOST:PORT[,...]",
                description = "The engines' ZMQ replay endpoints, one per worker (vLLM replay_endpoint).")
        String kvEventsReplay;
        @Option(names = "--served-model", paramLabel = "NAME", description = "The model name the engines serve (default: --model).")
        String servedModel;
        @Option(names = "--model", paramLabel = "NAME",
                description = "A served model (repeatable: --model A --model B serves both side by side, each with its own "
                        + "--workers pool and planner); the first is the gateways' default model (default flotilla-sim).")
        List<String> models = new java.util.ArrayList<>();
        @Option(names = "--model-dir", paramLabel = "DIR",
                description = "HuggingFace model directory (tokenizer.json, tokenizer_config.json / chat_template.jinja): the gateway "
                        + "tokenizes --model with it and the workers hash in its tokenizer's namespace (default: cl100k_base and ChatML). "
                        + "With several --model, none or one per model, in their order.")
        List<String> modelDirs = new java.util.ArrayList<>();
        @Option(names = "--gateways", defaultValue = "1",
                description = "Gateway replicas (HTTP 8000, 8001, …); with more than one they share rate and in-flight limits "
                        + "through a Redis the launcher starts on " + io.flotilla.protocol.Ports.REDIS + " (default ${DEFAULT-VALUE}).")
        int gateways;
        @Option(names = "--redis", paramLabel = "HOST:PORT|none",
                description = "The Redis the gateways share their limits in, instead of starting one; none: every gateway "
                        + "counts its limits alone.")
        String redis;
        @Option(names = "--gateway-opt", paramLabel = "KEY=VALUE",
                description = "Any other flotilla.gateway setting of every gateway, e.g. rate-limit.requests-per-period=100, "
                        + "models.flotilla-sim.prefix-sharing=tenant or flow.tenant-max-in-flight=8 (repeatable).")
        List<String> gatewayOpts = new java.util.ArrayList<>();
        @Option(names = {"--block-size", "--engine-block-size"}, paramLabel = "N",
                description = "Tokens per KV block the workers hash with; with an external engine it must equal the engines' --block-size (vLLM) or --page-size (SGLang) (default 16).")
        Integer blockSize;
        @Option(names = "--kvbm-host", paramLabel = "SIZE",
                description = "Host-memory KV tier per simulated worker, e.g. 2GiB: evicted device blocks are kept there and onboarded back instead of recomputed.")
        String kvbmHost;
        @Option(names = "--kvbm-disk", paramLabel = "SIZE",
                description = "Disk KV tier per simulated worker, e.g. 8GiB, in .flotilla/kvbm/<worker>; host-memory victims go there, and it survives worker restarts. Needs --kvbm-host.")
        String kvbmDisk;
        @Option(names = "--kv-blocks", paramLabel = "N",
                description = "Device KV blocks per simulated worker (default 8192).")
        Integer kvBlocks;
        @Option(names = "--tool-parser", paramLabel = "NAME",
                description = "How the model writes tool calls: hermes (the default with the built-in ChatML template), "
                        + "llama3-json, mistral, deepseek-v3 or none; the gateway parses them into tool_calls.")
        String toolParser;
        @Option(names = "--reasoning-parser", paramLabel = "NAME",
                description = "How the model marks its reasoning: deepseek-r1 or qwen3 (default: none); the gateway "
                        + "returns it as reasoning_content.")
        String reasoningParser;
        @Option(names = "--sim-script", paramLabel = "FILE",
                description = "Scripted replies of the simulated engines (JSON rules: a prompt match and its reply).")
        String simScript;
        @Option(names = "--sim-profile", paramLabel = "FILE",
                description = "Timing of the simulated engines from a measured profile (the JSON bin/flotilla profile "
                        + "writes, fitted by each worker) or timing properties (prefill.a ... decode.c).")
        String simProfile;
        @Option(names = "--no-cds",
                description = "Neither build nor use the class-data-sharing archives (one per service jar, built at the first up after a build).")
        boolean noCds;
        @Option(names = "--worker-jit", paramLabel = "quick|tiered", defaultValue = "quick",
                description = "How the workers' JVMs compile: quick (the default: the client compiler only, about half "
                        + "the CPU of a start-up and of its first minutes, for workers the planner starts on a rise) or "
                        + "tiered (the JVM's default, C2 for hot code, for long-lived workers on cores to spare).")
        String workerJit;

        /**
         * {@code --model} and {@code --model-dir} as served models: none given is flotilla-sim; directories by
         * position; {@code --tool-parser}, {@code --reasoning-parser} and {@code --sim-script} apply to every model.
         */
        /**
         * The llama-cpp engine: its model prepared (the tiny one generated, a GGUF's tokenizer written), and the model
         * directory and name the gateway and workers serve it under.
         */
        ExternalEngines llamaCpp() {
            if (models.size() > 1) {
                throw new LauncherException("--engine llama-cpp serves one model (--gguf)");
            }
            LlamaEngine.Prepared p = LlamaEngine.prepare(gguf, modelDirs.isEmpty() ? null : modelDirs.get(0),
                    slots == null ? LlamaEngine.DEFAULT_SLOTS : slots,
                    engineThreads == null ? LlamaEngine.DEFAULT_THREADS : engineThreads,
                    contextPerSlot == null ? LlamaEngine.DEFAULT_CONTEXT_PER_SLOT : contextPerSlot, workingDir(), stateDir());
            modelDirs = new java.util.ArrayList<>(List.of(p.modelDir()));
            if (models.isEmpty()) {
                models = new java.util.ArrayList<>(List.of(gguf == null ? "flotilla-tiny"
                        : LlamaEngine.nameOf(p.engine().gguf())));
            }
            return ExternalEngines.inProcess(p.engine());
        }

        List<ServedModel> servedModels(boolean simulated) {
            if (models.isEmpty()) {
                if (modelDirs.size() > 1) {
                    throw new LauncherException("--model-dir is given " + modelDirs.size() + " times for one model");
                }
                return List.of(ServedModel.parse(null, modelDirs.isEmpty() ? null : modelDirs.get(0), blockSize, simulated,
                        workingDir()).withBehaviour(toolParser, reasoningParser, simScript, workingDir())
                        .withSimTiming(simProfile, workingDir()));
            }
            if (!modelDirs.isEmpty() && modelDirs.size() != models.size()) {
                throw new LauncherException("give --model-dir once per --model (in their order) or not at all: "
                        + models.size() + " models, " + modelDirs.size() + " directories");
            }
            List<ServedModel> out = new java.util.ArrayList<>();
            for (int m = 0; m < models.size(); m++) {
                out.add(ServedModel.parse(models.get(m), modelDirs.isEmpty() ? null : modelDirs.get(m), blockSize, simulated,
                        workingDir()).withBehaviour(toolParser, reasoningParser, simScript, workingDir())
                        .withSimTiming(simProfile, workingDir()));
            }
            return out;
        }

        @Option(names = "--prefix-sharing", defaultValue = "global", paramLabel = "global|tenant",
                description = "tenant: each tenant's cached prefixes are private to it (no cache-hit timing or cached_tokens "
                        + "reveals another tenant's prompt); global shares them (default ${DEFAULT-VALUE}).")
        String prefixSharing;

        @Option(names = "--public-prefix", paramLabel = "TEXT",
                description = "With --prefix-sharing tenant: a prompt prefix (e.g. a system prompt) every tenant still shares. Repeatable.")
        List<String> publicPrefixes;

        @Option(names = "--api-key", paramLabel = "KEY",
                description = "An accepted API key; each key is a tenant (without any: an open API whose tenants are the requests' user). Repeatable.")
        List<String> apiKeys;

        @Option(names = "--lora", paramLabel = "NAME[=PATH]",
                description = "A LoRA adapter every worker serves (requests name it as their model): simulated engines model it; "
                        + "vLLM loads PATH on demand. Repeatable.")
        List<String> loras;

        @Option(names = "--lora-slots", defaultValue = "4", description = "Adapters an engine holds at once (default ${DEFAULT-VALUE}).")
        int loraSlots;

        @Option(names = "--lora-load-ms", defaultValue = "500",
                description = "Simulated adapter load time; vLLM: the advertised one until loads are measured (default ${DEFAULT-VALUE}).")
        double loraLoadMs;

        @Option(names = "--tracing",
                description = "Start a Zipkin server (trace store and UI on " + io.flotilla.cluster.zipkin.ZipkinServer.PORT
                        + ") and send every service's spans to it.")
        boolean tracing;

        @Option(names = "--tracing-endpoint", paramLabel = "URL",
                description = "Send every service's spans to this running Zipkin-compatible collector "
                        + "(http://HOST:9411/api/v2/spans) instead of starting one.")
        String tracingEndpoint;

        @Option(names = "--tracing-sample", paramLabel = "P",
                description = "With --tracing or --tracing-endpoint: the probability that a request is traced (default 1.0).")
        Double tracingSample;

        @Option(names = "--json-logs", paramLabel = "ecs|logstash|gelf", arity = "0..1", fallbackValue = "ecs",
                description = "Every service logs one JSON object per line in this format (default when given without one: ecs).")
        String jsonLogs;

        @Override
        public Integer call() throws InterruptedException {
            if (!(simSpeedup > 0) || Double.isInfinite(simSpeedup)) {
                throw new LauncherException("--sim-speedup must be a positive number");
            }
            FleetOptions fleetOptions = fleet(fleet, fleetPerJvm);
            IndexerShardOptions shardOptions = new IndexerShardOptions(indexerShards);
            if (fleetOptions.enabled() && (workers != null || prefill + decode > 0 || !"sim".equals(engine)
                    || models.size() > 1 || "local".equals(planner) || kvbmHost != null || kvbmDisk != null)) {
                throw new LauncherException("--fleet runs simulated aggregated workers of one model: it replaces --workers, "
                        + "--prefill and --decode, and takes no --engine other than sim, no second --model, no --planner "
                        + "local and no --kvbm-host or --kvbm-disk");
            }
            int workers = fleetOptions.enabled() ? 0 : this.workers == null ? 2 : this.workers;
            if (workers < 0 || prefill < 0 || decode < 0) {
                throw new LauncherException("worker counts must not be negative");
            }
            if ((prefill > 0) != (decode > 0)) {
                throw new LauncherException("--prefill and --decode must both be positive for a P/D cluster");
            }
            if (routers < 1 || routers > io.flotilla.protocol.Ports.MAX_ROUTERS) {
                throw new LauncherException("--routers must be between 1 and " + io.flotilla.protocol.Ports.MAX_ROUTERS);
            }
            if (!List.of("kv", "load", "round-robin", "random").contains(routerMode)) {
                throw new LauncherException("--router-mode must be kv, load, round-robin or random, not " + routerMode);
            }
            int aggregated = prefill + decode > 0 ? 0 : workers;
            if (aggregated + prefill + decode == 0 && !fleetOptions.enabled()) {
                throw new LauncherException("a cluster needs at least one worker");
            }
            PlannerOptions plannerOptions = PlannerOptions.parse(planner, plannerInterval, plannerOpts);
            int modelCount = Math.max(1, models.size());
            ExternalEngines engines = ExternalEngines.parse(engine, engineUrls, kvEvents, kvEventsReplay, servedModel,
                    (aggregated + prefill + decode) * modelCount);
            if ("llama-cpp".equals(engine)) {
                engines = llamaCpp();
            } else if (gguf != null || slots != null || engineThreads != null || contextPerSlot != null) {
                throw new LauncherException("--gguf, --slots, --engine-threads and --context-per-slot need --engine llama-cpp");
            }
            List<ServedModel> served = servedModels(!engines.real());
            if (served.size() > 1 && servedModel != null) {
                throw new LauncherException("--served-model names the engines' model of a one-model cluster; with several "
                        + "--model each model's engines serve it under its own name");
            }
            if (served.size() > 1 && "local".equals(plannerOptions.connector())) {
                throw new LauncherException("--planner local scales a one-model cluster; with several --model the planners "
                        + "run in shadow mode (each records its own model's targets)");
            }
            if (simScript != null && engines.real()) {
                throw new LauncherException("--sim-script scripts the simulated engines; with --engine openai-http the engines answer");
            }
            if (simProfile != null && engines.real()) {
                throw new LauncherException("--sim-profile times the simulated engines; with --engine " + engine
                        + " the engines take the time they take");
            }
            GatewayOptions gatewayOptions = GatewayOptions.parse(gateways, redis, gatewayOpts);
            if (engines.external() && served.get(0).modelDir() == null) {
                System.err.println("flotilla: note: without --model-dir the gateway tokenizes with cl100k_base; "
                        + "an engine serving a real model needs that model's tokenizer (--model-dir DIR)");
            }
            KvbmOptions kvbm = KvbmOptions.parse(kvbmHost, kvbmDisk, kvBlocks);
            if (engines.real() && !kvbm.equals(KvbmOptions.NONE)) {
                throw new LauncherException("--kvbm-host, --kvbm-disk and --kv-blocks size simulated workers; an external "
                        + "engine has its own (vLLM: --kv-transfer-config with OffloadingConnector or LMCache)");
            }
            Path clientConfig = kafkaConfig == null ? null : KafkaClientFile.check(workingDir().resolve(kafkaConfig));
            if (clientConfig != null && kafka == null) {
                throw new LauncherException("--kafka-config configures clients of an existing Kafka; give its address with --kafka");
            }
            Tenancy tenancy = Tenancy.parse(prefixSharing, publicPrefixes, apiKeys, loras, loraSlots, loraLoadMs);
            tenancy.checkAgainst(gatewayOptions);
            Observability observability = Observability.parse(tracing, tracingEndpoint, tracingSample, jsonLogs);
            LocalCluster cluster = new LocalCluster(home(), stateDir(), System.out, !noCds).tenancy(tenancy)
                    .workerJit(WorkerJit.parse(workerJit)).observability(observability).fleet(fleetOptions)
                    .indexerShards(shardOptions);
            List<RunningService> started = cluster.up(ClusterSpec.builder().workers(aggregated).prefillDecode(prefill, decode)
                    .routerMode(routerMode).externalKafka(kafka).kafkaConfig(clientConfig).simSpeedup(simSpeedup)
                    .planner(plannerOptions).engines(engines).models(served).routers(routers).kvbm(kvbm)
                    .gateways(gatewayOptions).timeout(Duration.ofSeconds(timeoutSeconds)).build());
            StatusTable.print(System.out, started, home());
            if (detach) {
                System.out.println("running in the background; stop it with bin/flotilla down");
                return 0;
            }
            System.out.println("press Ctrl-C to stop");
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                System.out.println("\nstopping ...");
                cluster.down(Duration.ofSeconds(30));
                stopped.countDown();
            }, "flotilla-stop"));
            stopped.await();
            return 0;
        }
    }

    private static FleetOptions fleet(Integer fleet, Integer perJvm) {
        if (fleet == null) {
            if (perJvm != null) {
                throw new LauncherException("--fleet-per-jvm sizes the JVMs of a --fleet; give --fleet N");
            }
            return FleetOptions.NONE;
        }
        if (fleet < 1) {
            throw new LauncherException("--fleet needs at least one worker: " + fleet);
        }
        return new FleetOptions(fleet, perJvm == null ? FleetOptions.DEFAULT_PER_JVM : perJvm);
    }

    @Command(name = "down", description = "Stop every process of the cluster (SIGTERM, then SIGKILL after the grace period).")
    static final class Down implements Callable<Integer> {
        @Option(names = "--grace", defaultValue = "30", description = "Seconds before SIGKILL (default ${DEFAULT-VALUE}).")
        int graceSeconds;

        @Override
        public Integer call() {
            int n = new LocalCluster(home(), stateDir(), System.out).down(Duration.ofSeconds(graceSeconds));
            System.out.println(n == 0 ? "nothing was running" : "stopped " + n + " processes");
            return 0;
        }
    }

    @Command(name = "status", description = "Services, pids, ports and health.")
    static final class Status implements Callable<Integer> {
        @Override
        public Integer call() {
            List<RunningService> services = new LocalCluster(home(), stateDir(), System.out).status();
            if (services.isEmpty()) {
                System.out.println("no cluster is running");
                return 1;
            }
            StatusTable.print(System.out, services, home());
            return services.stream().allMatch(RunningService::alive) ? 0 : 1;
        }
    }

    @Command(name = "check-idle", hidden = true, description = "Exit 1 with a message when a cluster is running.")
    static final class CheckIdle implements Callable<Integer> {
        @Override
        public Integer call() {
            new LocalCluster(home(), stateDir(), System.out).requireIdle();
            return 0;
        }
    }

    @Command(name = "kill-worker", description = "SIGKILL worker N (failure drills).")
    static final class KillWorker implements Callable<Integer> {
        @Parameters(paramLabel = "N", description = "Worker number.")
        int n;

        @Override
        public Integer call() {
            RunningService w = new LocalCluster(home(), stateDir(), System.out).killWorker(n);
            System.out.println("killed " + w.name() + " (pid " + w.pid() + ")");
            return 0;
        }
    }

    @Command(name = "start-worker", description = "Start worker N (again) and wait until it is healthy.")
    static final class StartWorker implements Callable<Integer> {
        @Parameters(paramLabel = "N", description = "Worker number.")
        int n;
        @Option(names = "--timeout", defaultValue = "120", description = "Seconds to wait for health.")
        int timeoutSeconds;

        @Override
        public Integer call() {
            RunningService w = new LocalCluster(home(), stateDir(), System.out).startWorker(n, Duration.ofSeconds(timeoutSeconds));
            System.out.println("started " + w.name() + " (pid " + w.pid() + ", " + w.ports() + ")");
            return 0;
        }
    }

    @Command(name = "kill-router", description = "SIGKILL router replica N (failure drills; 0 is the first).")
    static final class KillRouter implements Callable<Integer> {
        @Parameters(paramLabel = "N", description = "Router number.")
        int n;

        @Override
        public Integer call() {
            RunningService r = new LocalCluster(home(), stateDir(), System.out).killRouter(n);
            System.out.println("killed " + r.name() + " (pid " + r.pid() + ")");
            return 0;
        }
    }

    @Command(name = "start-router", description = "Start router replica N (again) and wait until it is healthy.")
    static final class StartRouter implements Callable<Integer> {
        @Parameters(paramLabel = "N", description = "Router number.")
        int n;
        @Option(names = "--timeout", defaultValue = "120", description = "Seconds to wait for health.")
        int timeoutSeconds;

        @Override
        public Integer call() {
            RunningService r = new LocalCluster(home(), stateDir(), System.out).startRouter(n, Duration.ofSeconds(timeoutSeconds));
            System.out.println("started " + r.name() + " (pid " + r.pid() + ", " + r.ports() + ")");
            return 0;
        }
    }
}
