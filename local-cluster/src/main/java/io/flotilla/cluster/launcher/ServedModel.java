package io.flotilla.cluster.launcher;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The model the local cluster serves ({@code bin/flotilla up [--model NAME] [--model-dir DIR]
 * [--block-size N]}) and the block-hash namespace the gateway and every worker share.
 *
 * <p>Both sides hash a prompt's blocks in {@code KvNamespace.of(model, tokenizer id, kv layout)}: the
 * workers with {@code flotilla.worker.model}, {@code tokenizer-id} and {@code dtype/bs<sim.block-size>/paged};
 * the gateway with the request's model, its tokenizer's id and {@code bf16/bs<block size>/paged}, where the
 * block size is the one its workers advertise. The launcher gives the workers the model name, the tokenizer
 * id and the block size, and the gateway the same model name (as its default model) and, with a model
 * directory, the directory and the same tokenizer id; dtype stays {@code bf16} on both sides.
 *
 * <p>With a model directory the tokenizer id is what the gateway would derive itself: {@code name_or_path}
 * of {@code tokenizer_config.json}, else the directory's name. Simulated engines then also take the
 * tokenizer's vocabulary (size and end-of-sequence token), so they accept every id the gateway sends
 * (Llama 3's special tokens are above cl100k's 100277 ids) and generate ids the gateway can decode.
 *
 * @param name        served model name: the workers' {@code flotilla.worker.model} and the gateway's default model
 * @param modelDir    absolute HuggingFace model directory the gateway tokenizes with, or null for its
 *                    built-in tokenizer (cl100k_base) and ChatML
 * @param tokenizerId tokenizer id of the block-hash namespace
 * @param blockSize   tokens per KV block the workers hash with (and the engines' {@code --block-size})
 * @param vocabSize   vocabulary of simulated engines, or null for theirs (cl100k_base)
 * @param eosTokenId  end-of-sequence token of simulated engines, or null for theirs
 * @param toolParser  the gateway's tool-call parser for the model ({@code --tool-parser}), or null for its default
 * @param reasoningParser the gateway's reasoning parser ({@code --reasoning-parser}), or null for none
 * @param simScript   scripted replies of simulated engines ({@code --sim-script}, absolute), or null for none
 * @param simProfile  timing of simulated engines ({@code --sim-profile}, absolute): a measured profile or timing
 *                    properties, or null for the simulator's own
 */
public record ServedModel(String name, Path modelDir, String tokenizerId, int blockSize, Integer vocabSize,
                          Integer eosTokenId, String toolParser, String reasoningParser, Path simScript, Path simProfile) {

    public ServedModel(String name, Path modelDir, String tokenizerId, int blockSize, Integer vocabSize, Integer eosTokenId) {
        this(name, modelDir, tokenizerId, blockSize, vocabSize, eosTokenId, null, null, null, null);
    }

    /**
     * The same model with the gateway's output parsers and the simulated engines' script.
     *
     * @param workingDir what a relative {@code simScript} is relative to
     */
    public ServedModel withBehaviour(String tools, String reasoning, String script, Path workingDir) {
        return new ServedModel(name, modelDir, tokenizerId, blockSize, vocabSize, eosTokenId, blank(tools), blank(reasoning),
                existingFile("--sim-script", script, workingDir), simProfile);
    }

    /**
     * The same model whose simulated engines take their timing from {@code profile} (null: their own): the JSON
     * {@code bin/flotilla profile} writes, fitted by the worker, or timing properties.
     *
     * @param workingDir what a relative {@code profile} is relative to
     */
    public ServedModel withSimTiming(String profile, Path workingDir) {
        return new ServedModel(name, modelDir, tokenizerId, blockSize, vocabSize, eosTokenId, toolParser, reasoningParser,
                simScript, existingFile("--sim-profile", profile, workingDir));
    }

    private static Path existingFile(String flag, String file, Path workingDir) {
        if (file == null) {
            return null;
        }
        Path path = workingDir.resolve(file).toAbsolutePath().normalize();
        if (!Files.isRegularFile(path)) {
            throw new LauncherException(flag + " " + path + " is not a file");
        }
        return path;
    }

    private static String blank(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }

    public static final String DEFAULT_NAME = "flotilla-sim";
    public static final String DEFAULT_TOKENIZER = "cl100k_base";
    public static final int DEFAULT_BLOCK_SIZE = 16;

    /** Letters, digits and {@code . _ - / : @ +}: HuggingFace ids and vLLM served names, safe as a property map key. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,255}");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The simulated model: flotilla-sim, cl100k_base, blocks of 16 tokens. */
    public static final ServedModel DEFAULT = new ServedModel(DEFAULT_NAME, null, DEFAULT_TOKENIZER, DEFAULT_BLOCK_SIZE,
            null, null);

    public ServedModel {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new LauncherException("--model must be letters, digits and . _ - / : @ + (at most 256), not '" + name + "'");
        }
        if (blockSize < 1 || blockSize > 1024) {
            throw new LauncherException("--block-size must be between 1 and 1024, not " + blockSize);
        }
        if (tokenizerId == null || tokenizerId.isBlank()) {
            throw new LauncherException("model " + name + " has no tokenizer id");
        }
        if ((vocabSize == null) != (eosTokenId == null)) {
            throw new IllegalArgumentException("vocabSize and eosTokenId go together");
        }
    }

    /**
     * From the command line.
     *
     * @param name           {@code --model}, or null for flotilla-sim
     * @param modelDir       {@code --model-dir}, or null for the gateway's built-in tokenizer
     * @param blockSize      {@code --block-size}, or null for 16
     * @param simulated      whether the workers run simulated engines (they then take the tokenizer's vocabulary)
     * @param workingDir     what a relative {@code --model-dir} is relative to (where bin/flotilla was run)
     * @throws LauncherException with a one-line reason when the directory cannot serve
     */
    public static ServedModel parse(String name, String modelDir, Integer blockSize, boolean simulated, Path workingDir) {
        String model = name == null ? DEFAULT_NAME : name.trim();
        int block = blockSize == null ? DEFAULT_BLOCK_SIZE : blockSize;
        if (modelDir == null) {
            return new ServedModel(model, null, DEFAULT_TOKENIZER, block, null, null);
        }
        if (modelDir.isBlank()) {
            throw new LauncherException("--model-dir must not be empty");
        }
        Path dir = workingDir.resolve(modelDir).toAbsolutePath().normalize();
        if (!Files.exists(dir)) {
            throw new LauncherException("--model-dir " + dir + " does not exist");
        }
        if (!Files.isDirectory(dir)) {
            throw new LauncherException("--model-dir " + dir + " is not a directory");
        }
        Path tokenizerJson = dir.resolve("tokenizer.json");
        if (!Files.isRegularFile(tokenizerJson)) {
            throw new LauncherException("--model-dir " + dir + " has no tokenizer.json (a HuggingFace fast tokenizer;"
                    + " AutoTokenizer.from_pretrained(...).save_pretrained(DIR) writes one)");
        }
        JsonNode config = tokenizerConfig(dir);
        if (!Files.isRegularFile(dir.resolve("chat_template.jinja")) && !config.hasNonNull("chat_template")) {
            throw new LauncherException("--model-dir " + dir + " has no chat template (chat_template.jinja, or"
                    + " chat_template in tokenizer_config.json); the gateway renders chat prompts with it");
        }
        JsonNode nameOrPath = config.path("name_or_path");
        String tokenizerId = nameOrPath.isTextual() && !nameOrPath.asText().isBlank() ? nameOrPath.asText()
                : dir.getFileName().toString();
        if (!simulated) {
            return new ServedModel(model, dir, tokenizerId, block, null, null);
        }
        Vocabulary v = vocabulary(tokenizerJson, specialToken(config.path("eos_token")));
        return new ServedModel(model, dir, tokenizerId, block, v.size(), v.eosId() >= 0 ? v.eosId() : v.size() - 1);
    }

    /** The workers' arguments: model, tokenizer id, block size and, for simulated engines, the vocabulary. */
    public List<String> workerArgs() {
        List<String> args = new ArrayList<>(List.of(
                "--flotilla.worker.model=" + name,
                "--flotilla.worker.tokenizer-id=" + tokenizerId,
                "--flotilla.worker.sim.block-size=" + blockSize));
        if (modelDir != null) { // registered with the worker: where a gateway can load the tokenizer
            args.add("--flotilla.worker.tokenizer-source=" + modelDir);
        }
        if (vocabSize != null) {
            args.add("--flotilla.worker.sim.vocab-size=" + vocabSize);
            args.add("--flotilla.worker.sim.eos-token-id=" + eosTokenId);
        }
        if (simScript != null) {
            args.add("--flotilla.worker.sim.script=" + simScript);
        }
        if (simProfile != null) {
            args.add("--flotilla.worker.sim.profile=" + simProfile);
        }
        return args;
    }

    /**
     * The gateway's arguments: the default model and, with a model directory, the model's directory and
     * tokenizer id (the map key in brackets keeps dots, slashes and capitals of the name).
     */
    public List<String> gatewayArgs() {
        List<String> args = new ArrayList<>(List.of("--flotilla.gateway.default-model=" + name));
        args.addAll(gatewayModelArgs());
        return args;
    }

    /** The gateway's settings of this model alone: its directory and tokenizer id (with a model directory), its output parsers. */
    List<String> gatewayModelArgs() {
        List<String> args = new ArrayList<>();
        if (modelDir != null) {
            args.add("--flotilla.gateway.models[" + name + "].model-dir=" + modelDir);
            args.add("--flotilla.gateway.models[" + name + "].tokenizer=" + tokenizerId);
        }
        if (toolParser != null) {
            args.add("--flotilla.gateway.models[" + name + "].tool-parser=" + toolParser);
        }
        if (reasoningParser != null) {
            args.add("--flotilla.gateway.models[" + name + "].reasoning-parser=" + reasoningParser);
        }
        return args;
    }

    /** The planner plans the pools of this model. */
    public List<String> plannerArgs() {
        return List.of("--flotilla.planner.model=" + name);
    }

    /** Records the model in the cluster state, so start-worker starts a worker in the same namespace. */
    void save(ClusterState state) {
        save(state, 0);
    }

    /** As {@link #save(ClusterState)}, as the cluster's model number {@code index} (0 keeps the one-model keys). */
    void save(ClusterState state, int index) {
        state.setLayout(key("model", index), name);
        state.setLayout(key("model-dir", index), modelDir == null ? "" : modelDir.toString());
        state.setLayout(key("tokenizer-id", index), tokenizerId);
        state.setLayout(key("block-size", index), Integer.toString(blockSize));
        state.setLayout(key("vocab-size", index), vocabSize == null ? "" : vocabSize.toString());
        state.setLayout(key("eos-token-id", index), eosTokenId == null ? "" : eosTokenId.toString());
        state.setLayout(key("tool-parser", index), toolParser == null ? "" : toolParser);
        state.setLayout(key("reasoning-parser", index), reasoningParser == null ? "" : reasoningParser);
        state.setLayout(key("sim-script", index), simScript == null ? "" : simScript.toString());
        state.setLayout(key("sim-profile", index), simProfile == null ? "" : simProfile.toString());
    }

    /**
     * What {@link #save} recorded; {@link #DEFAULT} for clusters recorded without it (the block size of
     * such a cluster, if any, was recorded as {@code engine-block-size}).
     */
    static ServedModel load(ClusterState state) {
        return load(state, 0);
    }

    /** What {@link #save(ClusterState, int)} recorded as model number {@code index}. */
    static ServedModel load(ClusterState state, int index) {
        String block = state.layout(key("block-size", index), index == 0 ? state.layout("engine-block-size", "") : "");
        String dir = state.layout(key("model-dir", index), "");
        String vocab = state.layout(key("vocab-size", index), "");
        String eos = state.layout(key("eos-token-id", index), "");
        String script = state.layout(key("sim-script", index), "");
        String profile = state.layout(key("sim-profile", index), "");
        return new ServedModel(state.layout(key("model", index), DEFAULT_NAME), dir.isEmpty() ? null : Path.of(dir),
                state.layout(key("tokenizer-id", index), DEFAULT_TOKENIZER),
                block.isEmpty() ? DEFAULT_BLOCK_SIZE : Integer.parseInt(block),
                vocab.isEmpty() ? null : Integer.valueOf(vocab), eos.isEmpty() ? null : Integer.valueOf(eos),
                blank(state.layout(key("tool-parser", index), "")), blank(state.layout(key("reasoning-parser", index), "")),
                script.isEmpty() ? null : Path.of(script), profile.isEmpty() ? null : Path.of(profile));
    }

    private static String key(String name, int index) {
        return index == 0 ? name : name + "." + index;
    }

    private static JsonNode tokenizerConfig(Path dir) {
        Path file = dir.resolve("tokenizer_config.json");
        if (!Files.isRegularFile(file)) {
            return JSON.createObjectNode();
        }
        try {
            JsonNode config = JSON.readTree(file.toFile());
            if (config == null || !config.isObject()) {
                throw new LauncherException("--model-dir " + dir + ": tokenizer_config.json is not a JSON object");
            }
            return config;
        } catch (IOException e) {
            throw new LauncherException("--model-dir " + dir + ": cannot read tokenizer_config.json: " + firstLine(e));
        }
    }

    /** A special token of tokenizer_config.json: a string or an AddedToken object {@code {"content": …}}. */
    private static String specialToken(JsonNode token) {
        if (token.isTextual()) {
            return token.asText();
        }
        return token.path("content").isTextual() ? token.path("content").asText() : null;
    }

    /**
     * @param size  highest token id + 1 over the model's vocabulary and the added tokens (what the gateway
     *              accepts in token-id prompts)
     * @param eosId id of the end-of-sequence token, or -1 when there is none or it is not in the vocabulary
     */
    record Vocabulary(int size, int eosId) {
    }

    /**
     * Reads the vocabulary of {@code tokenizer.json} as a stream (real files are megabytes of merges):
     * {@code model.vocab} is an object of token → id (BPE, WordPiece, WordLevel) or an array of
     * {@code [piece, score]} whose index is the id (Unigram); {@code added_tokens} are {@code {id, content}}.
     */
    static Vocabulary vocabulary(Path tokenizerJson, String eos) {
        String where = "--model-dir " + tokenizerJson.getParent() + ": tokenizer.json";
        int max = -1;
        int eosId = -1;
        boolean sawVocab = false;
        try (JsonParser p = JSON.getFactory().createParser(tokenizerJson.toFile())) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new LauncherException(where + " is not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if ("added_tokens".equals(field) && value == JsonToken.START_ARRAY) {
                    for (Map.Entry<String, Integer> t : addedTokens(p).entrySet()) {
                        max = Math.max(max, t.getValue());
                        if (t.getKey().equals(eos)) {
                            eosId = t.getValue();
                        }
                    }
                } else if ("model".equals(field) && value == JsonToken.START_OBJECT) {
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String key = p.currentName();
                        JsonToken v = p.nextToken();
                        if ("vocab".equals(key) && v == JsonToken.START_OBJECT) {
                            sawVocab = true;
                            while (p.nextToken() == JsonToken.FIELD_NAME) {
                                String token = p.currentName();
                                p.nextToken();
                                int id = p.getValueAsInt(-1);
                                max = Math.max(max, id);
                                if (eosId < 0 && token.equals(eos)) {
                                    eosId = id;
                                }
                            }
                        } else if ("vocab".equals(key) && v == JsonToken.START_ARRAY) {
                            sawVocab = true;
                            int id = 0;
                            while (p.nextToken() == JsonToken.START_ARRAY) {
                                p.nextToken();
                                if (eosId < 0 && eos != null && eos.equals(p.getValueAsString())) {
                                    eosId = id;
                                }
                                max = Math.max(max, id++);
                                while (p.nextToken() != JsonToken.END_ARRAY) { // the score
                                    p.skipChildren();
                                }
                            }
                        } else {
                            p.skipChildren();
                        }
                    }
                } else {
                    p.skipChildren();
                }
            }
        } catch (StreamReadException e) {
            throw new LauncherException(where + " is not valid JSON: " + firstLine(e));
        } catch (IOException e) {
            throw new LauncherException(where + " cannot be read: " + firstLine(e));
        }
        if (!sawVocab || max < 0) {
            throw new LauncherException(where + " has no model.vocab");
        }
        return new Vocabulary(max + 1, eosId);
    }

    private static Map<String, Integer> addedTokens(JsonParser p) throws IOException {
        Map<String, Integer> out = new HashMap<>();
        while (p.nextToken() == JsonToken.START_OBJECT) {
            String content = null;
            int id = -1;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                p.nextToken();
                if ("id".equals(key)) {
                    id = p.getValueAsInt(-1);
                } else if ("content".equals(key)) {
                    content = p.getValueAsString();
                } else {
                    p.skipChildren();
                }
            }
            if (content != null && id >= 0) {
                out.put(content, id);
            }
        }
        return out;
    }

    private static String firstLine(Exception e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
