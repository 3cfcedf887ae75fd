package io.flotilla.cluster.launcher;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;

/**
 * External engine servers (vLLM, SGLang) the local cluster's workers front instead of simulated
 * engines: {@code bin/flotilla up --engine openai-http --engine-url URL[,URL...] [--kv-events
 * tcp://…[,…]] [--kv-events-replay tcp://…[,…]] [--served-model NAME]}.
 * Worker n fronts engine n: the i-th entry of every list belongs to worker i, in worker order
 * (prefill workers first in a P/D layout). The model, its tokenizer and the block size the workers hash
 * with are the cluster's {@link ServedModel}, whatever the engine.
 *
 * @param urls           base URLs of the engines' OpenAI-compatible servers; empty: simulated engines
 * @param kvEvents       the engines' ZMQ KV event PUB endpoints; empty: no KV events
 * @param kvEventsReplay the engines' ZMQ replay endpoints; empty: gaps resync the workers' views
 * @param servedModel    the model name the engines serve, or null for the workers' model ({@code --model})
 * @param engine         the adapter: {@code openai-http} (vLLM's OpenAI-compatible API) or {@code sglang}
 *                       (SGLang's native {@code /generate})
 */
public record ExternalEngines(List<String> urls, List<String> kvEvents, List<String> kvEventsReplay, String servedModel,
                              String engine, LlamaEngine llama) {

    /** Every worker runs a simulated engine. */
    public static final ExternalEngines NONE = new ExternalEngines(List.of(), List.of(), List.of(), null);

    public ExternalEngines(List<String> urls, List<String> kvEvents, List<String> kvEventsReplay, String servedModel) {
        this(urls, kvEvents, kvEventsReplay, servedModel, "openai-http");
    }

    public ExternalEngines(List<String> urls, List<String> kvEvents, List<String> kvEventsReplay, String servedModel,
                           String engine) {
        this(urls, kvEvents, kvEventsReplay, servedModel, engine, null);
    }

    /** Every worker runs llama.cpp in its own process ({@link LlamaEngine}). */
    public static ExternalEngines inProcess(LlamaEngine llama) {
        return new ExternalEngines(List.of(), List.of(), List.of(), null, "llama-cpp", llama);
    }

    /** Whether the workers run real engines (external servers or llama.cpp in process), not simulated ones. */
    public boolean real() {
        return external() || llama != null;
    }

    public ExternalEngines {
        urls = List.copyOf(urls);
        kvEvents = List.copyOf(kvEvents);
        kvEventsReplay = List.copyOf(kvEventsReplay);
    }

    /**
     * From the command line, checked against the cluster's {@code workers}.
     *
     * @param engine sim, openai-http or sglang
     * @throws LauncherException with a one-line reason when the flags do not fit together
     */
    public static ExternalEngines parse(String engine, String urls, String kvEvents, String kvEventsReplay,
                                        String servedModel, int workers) {
        if ("sim".equals(engine) || "llama-cpp".equals(engine)) {
            if (urls != null || kvEvents != null || kvEventsReplay != null || servedModel != null) {
                throw new LauncherException("--engine-url, --kv-events, --kv-events-replay and --served-model need "
                        + "--engine openai-http or --engine sglang");
            }
            return NONE; // llama-cpp: the caller adds the engine once its model is prepared (inProcess)
        }
        if (!"openai-http".equals(engine) && !"sglang".equals(engine)) {
            throw new LauncherException("--engine must be sim, openai-http, sglang or llama-cpp, not " + engine);
        }
        if (urls == null) {
            throw new LauncherException("--engine " + engine + " needs --engine-url with one URL per worker (" + workers + ")");
        }
        List<String> u = list("--engine-url", urls, "engine URL", workers);
        u.forEach(ExternalEngines::checkUrl);
        List<String> k = kvEvents == null ? List.of() : list("--kv-events", kvEvents, "KV event endpoint", workers);
        if (kvEventsReplay != null && kvEvents == null) {
            throw new LauncherException("--kv-events-replay needs --kv-events");
        }
        List<String> r = kvEventsReplay == null ? List.of() : list("--kv-events-replay", kvEventsReplay, "replay endpoint", workers);
        k.forEach(e -> checkZmq("--kv-events", e));
        r.forEach(e -> checkZmq("--kv-events-replay", e));
        if (servedModel != null && servedModel.isBlank()) {
            throw new LauncherException("--served-model must not be blank");
        }
        return new ExternalEngines(u, k, r, servedModel, engine);
    }

    public boolean external() {
        return !urls.isEmpty();
    }

    /** Worker n's engine settings as worker-agent arguments (none for simulated engines). */
    public List<String> workerArgs(int n) {
        if (llama != null) {
            return llama.workerArgs();
        }
        if (!external()) {
            return List.of();
        }
        if (n >= urls.size()) {
            throw new LauncherException("worker-" + n + " has no external engine (--engine-url names " + urls.size() + ")");
        }
        List<String> args = new ArrayList<>();
        args.add("--flotilla.worker.engine=" + engine);
        args.add("--flotilla.worker.http.url=" + urls.get(n));
        if (!kvEvents.isEmpty()) {
            args.add("--flotilla.worker.http.kv-events=" + kvEvents.get(n));
        }
        if (!kvEventsReplay.isEmpty()) {
            args.add("--flotilla.worker.http.kv-events-replay=" + kvEventsReplay.get(n));
        }
        if (servedModel != null) {
            args.add("--flotilla.worker.http.served-model=" + servedModel);
        }
        return args;
    }

    /** Records these settings in the cluster state, so start-worker starts a worker in front of the same engine. */
    void save(ClusterState state) {
        state.setLayout("engine", real() ? engine : "sim");
        if (llama != null) {
            llama.save(state);
        }
        state.setLayout("engine-urls", String.join(",", urls));
        state.setLayout("kv-events", String.join(",", kvEvents));
        state.setLayout("kv-events-replay", String.join(",", kvEventsReplay));
        state.setLayout("served-model", servedModel == null ? "" : servedModel);
    }

    /** The settings {@link #save} recorded; {@link #NONE} for clusters recorded without them. */
    static ExternalEngines load(ClusterState state) {
        String engine = state.layout("engine", "sim");
        if ("sim".equals(engine)) {
            return NONE;
        }
        if ("llama-cpp".equals(engine)) {
            return inProcess(LlamaEngine.load(state));
        }
        String model = state.layout("served-model", "");
        return new ExternalEngines(split(state.layout("engine-urls", "")), split(state.layout("kv-events", "")),
                split(state.layout("kv-events-replay", "")), model.isEmpty() ? null : model, engine);
    }

    private static List<String> list(String flag, String value, String what, int workers) {
        List<String> out = new ArrayList<>();
        for (String s : value.split(",", -1)) {
            String t = s.trim();
            if (t.isEmpty()) {
                throw new LauncherException(flag + " has an empty entry: " + value);
            }
            out.add(t);
        }
        if (out.size() != workers) {
            throw new LauncherException(flag + " names " + out.size() + " " + what + (out.size() == 1 ? "" : "s") + " for "
                    + workers + " worker" + (workers == 1 ? "" : "s") + "; give one per worker, comma-separated, in worker "
                    + "order (prefill workers first)");
        }
        return out;
    }

    private static List<String> split(String joined) {
        return joined.isEmpty() ? List.of() : List.of(joined.split(","));
    }

    private static void checkUrl(String url) {
        try {
            URI u = new URI(url);
            if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
                throw new LauncherException("--engine-url: " + url + " is not an http:// or https:// URL with a host");
            }
        } catch (URISyntaxException e) {
            throw new LauncherException("--engine-url: " + url + " is not a URL (" + e.getReason() + ")");
        }
    }

    private static void checkZmq(String flag, String endpoint) {
        if (!endpoint.matches("(tcp://[^:/\\s]+|tcp://\\[[0-9a-fA-F:]+]):\\d{1,5}|ipc://\\S+")) {
            throw new LauncherException(flag + ": " + endpoint + " is not a ZMQ endpoint (tcp://HOST:PORT or ipc://PATH)");
        }
    }
}
