package io.flotilla.cluster.launcher;

import io.flotilla.protocol.hash.KvNamespace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code bin/flotilla up --model NAME --model-dir DIR --block-size N}: checks, and what each service is given. */
class ServedModelTest {

    private static final Path STATE = Path.of("/tmp/flotilla-test-state");
    private static final String MODEL = "meta-llama/Llama-3.1-8B-Instruct";

    /** A BPE tokenizer.json: ids 0–9 in the vocabulary, then two added tokens; merges the reader must skip. */
    private static final String BPE = """
            {"version": "1.0", "truncation": null, "padding": null,
             "added_tokens": [
               {"id": 10, "content": "<|begin_of_text|>", "single_word": false, "special": true},
               {"id": 11, "content": "<|eot_id|>", "single_word": false, "special": true}],
             "normalizer": null,
             "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false},
             "decoder": {"type": "ByteLevel"},
             "model": {"type": "BPE", "dropout": null, "merges": [["H", "e"], ["l", "l"]],
                       "vocab": {"H": 0, "e": 1, "l": 2, "o": 3, "He": 4, "ll": 5, "a": 6, "b": 7, "c": 8, "d": 9}}}
            """;

    private static final String LLAMA_CONFIG = """
            {"name_or_path": "meta-llama/Llama-3.1-8B-Instruct", "bos_token": "<|begin_of_text|>",
             "eos_token": {"content": "<|eot_id|>", "lstrip": false, "rstrip": false},
             "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}"}
            """;

    private static Path modelDir(Path dir, String tokenizerJson, String tokenizerConfig) throws IOException {
        Files.createDirectories(dir);
        if (tokenizerJson != null) {
            Files.writeString(dir.resolve("tokenizer.json"), tokenizerJson);
        }
        if (tokenizerConfig != null) {
            Files.writeString(dir.resolve("tokenizer_config.json"), tokenizerConfig);
        }
        return dir;
    }

    private static ServiceSpec byName(List<ServiceSpec> services, String name) {
        return services.stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
    }

    /** {@code --flotilla.<prefix>KEY=VALUE} arguments as KEY → VALUE. */
    private static Map<String, String> settings(ServiceSpec s, String prefix) {
        return s.args().stream().filter(a -> a.startsWith("--" + prefix))
                .collect(Collectors.toMap(a -> a.substring(2 + prefix.length(), a.indexOf('=')),
                        a -> a.substring(a.indexOf('=') + 1)));
    }

    @Test
    void withoutFlagsEveryServiceServesTheSimulatedModel() {
        List<ServiceSpec> services = new ClusterLayout(2, 0, 0, "kv", "k:9092", STATE).services();
        for (String worker : List.of("worker-0", "worker-1")) {
            assertThat(byName(services, worker).args()).contains("--flotilla.worker.model=flotilla-sim",
                            "--flotilla.worker.tokenizer-id=cl100k_base", "--flotilla.worker.sim.block-size=16")
                    .noneMatch(a -> a.contains("vocab-size") || a.contains("eos-token-id"));
        }
        assertThat(byName(services, "gateway").args()).contains("--flotilla.gateway.default-model=flotilla-sim")
                .noneMatch(a -> a.startsWith("--flotilla.gateway.models"));
        assertThat(byName(services, "planner").args()).contains("--flotilla.planner.model=flotilla-sim");
        assertThat(ServedModel.parse(null, null, null, true, STATE)).isEqualTo(ServedModel.DEFAULT);
    }

    @Test
    void aModelDirectoryGoesToTheGatewayAndItsTokenizerIdToEveryWorker(@TempDir Path tmp) throws IOException {
        Path dir = modelDir(tmp.resolve("llama"), BPE, LLAMA_CONFIG);
        ServedModel model = ServedModel.parse(MODEL, dir.toString(), 32, false, STATE);
        assertThat(model.tokenizerId()).as("name_or_path, as the gateway derives it").isEqualTo(MODEL);
        assertThat(model.vocabSize()).as("engines bring their own vocabulary").isNull();

        List<ServiceSpec> services = new ClusterLayout(0, 1, 1, "kv", "k:9092", STATE, 1.0, model).services();
        for (String worker : List.of("worker-0", "worker-1")) {
            assertThat(byName(services, worker).args()).contains("--flotilla.worker.model=" + MODEL,
                    "--flotilla.worker.tokenizer-id=" + MODEL, "--flotilla.worker.sim.block-size=32");
        }
        assertThat(byName(services, "gateway").args()).contains(
                "--flotilla.gateway.default-model=" + MODEL,
                "--flotilla.gateway.models[" + MODEL + "].model-dir=" + dir,
                "--flotilla.gateway.models[" + MODEL + "].tokenizer=" + MODEL);
        assertThat(byName(services, "planner").args()).contains("--flotilla.planner.model=" + MODEL);
    }

    /**
     * The gateway hashes in {@code KvNamespace.of(model, tokenizer id, bf16/bs<advertised block size>/paged)}
     * (ModelProfiles.hasher), a worker in {@code KvNamespace.of(model, tokenizer-id, dtype/bs<sim.block-size>/paged)}
     * (WorkerFleet, dtype bf16 by default), and the workers advertise their block size.
     */
    @Test
    void theGatewayAndTheWorkersNameTheSameBlockHashNamespace(@TempDir Path tmp) throws IOException {
        Path dir = modelDir(tmp.resolve("llama"), BPE, LLAMA_CONFIG);
        ServedModel model = ServedModel.parse("llama-3.1-8b", dir.toString(), 32, true, STATE);
        List<ServiceSpec> services = new ClusterLayout(2, 0, 0, "kv", "k:9092", STATE, 1.0, model).services();
        Map<String, String> gateway = settings(byName(services, "gateway"), "flotilla.gateway.");
        String requestModel = gateway.get("default-model");
        for (String name : List.of("worker-0", "worker-1")) {
            Map<String, String> worker = settings(byName(services, name), "flotilla.worker.");
            int advertisedBlockSize = Integer.parseInt(worker.get("sim.block-size"));
            KvNamespace gatewayNamespace = KvNamespace.of(requestModel,
                    gateway.get("models[" + requestModel + "].tokenizer"), KvNamespace.pagedLayout("bf16", advertisedBlockSize));
            KvNamespace workerNamespace = KvNamespace.of(worker.get("model"), worker.get("tokenizer-id"),
                    KvNamespace.pagedLayout(worker.getOrDefault("dtype", "bf16"), advertisedBlockSize));
            assertThat(workerNamespace).isEqualTo(gatewayNamespace)
                    .isEqualTo(KvNamespace.of("llama-3.1-8b", MODEL, "bf16/bs32/paged"));
        }
    }

    @Test
    void simulatedEnginesTakeTheTokenizersVocabularyAndEos(@TempDir Path tmp) throws IOException {
        ServedModel model = ServedModel.parse("llama", modelDir(tmp.resolve("llama"), BPE, LLAMA_CONFIG).toString(),
                null, true, STATE);
        assertThat(model.vocabSize()).as("ids 0-9 and the added tokens 10 and 11").isEqualTo(12);
        assertThat(model.eosTokenId()).as("<|eot_id|>, an AddedToken object in tokenizer_config.json").isEqualTo(11);
        assertThat(model.workerArgs()).contains("--flotilla.worker.sim.vocab-size=12", "--flotilla.worker.sim.eos-token-id=11",
                "--flotilla.worker.sim.block-size=16");
    }

    @Test
    void aUnigramVocabularyIsNumberedByPosition(@TempDir Path tmp) throws IOException {
        String unigram = """
                {"added_tokens": [{"id": 0, "content": "<pad>", "special": true}],
                 "model": {"type": "Unigram", "unk_id": 2,
                           "vocab": [["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0], ["\\u2581a", -2.5], ["b", -3.25]]}}
                """;
        ServedModel model = ServedModel.parse("t5", modelDir(tmp.resolve("t5"), unigram,
                "{\"eos_token\": \"</s>\", \"chat_template\": \"{{ messages[0].content }}\"}").toString(), null, true, STATE);
        assertThat(model.vocabSize()).isEqualTo(5);
        assertThat(model.eosTokenId()).as("found in the vocabulary, not among the added tokens").isEqualTo(1);
        assertThat(model.tokenizerId()).as("no name_or_path: the directory's name").isEqualTo("t5");
    }

    @Test
    void withoutAnEosTokenTheSimulatedEnginesEndOnTheLastId(@TempDir Path tmp) throws IOException {
        ServedModel model = ServedModel.parse("m", modelDir(tmp.resolve("m"), BPE,
                "{\"chat_template\": \"{{ messages[0].content }}\"}").toString(), null, true, STATE);
        assertThat(model.vocabSize()).isEqualTo(12);
        assertThat(model.eosTokenId()).isEqualTo(11);
    }

    @Test
    void aRelativeModelDirIsRelativeToWhereTheLauncherRan(@TempDir Path tmp) throws IOException {
        Path dir = modelDir(tmp.resolve("models/llama"), BPE, null);
        Files.writeString(dir.resolve("chat_template.jinja"), "{{ messages[0].content }}");
        ServedModel model = ServedModel.parse("llama", "models/./llama", null, false, tmp);
        assertThat(model.modelDir()).isEqualTo(dir.toAbsolutePath());
        assertThat(model.tokenizerId()).as("no tokenizer_config.json: the directory's name").isEqualTo("llama");
    }

    @Test
    void aModelWithoutDirectoryKeepsTheBuiltInTokenizer() {
        ServedModel model = ServedModel.parse("my-model", null, 64, true, STATE);
        assertThat(model.workerArgs()).containsExactly("--flotilla.worker.model=my-model",
                "--flotilla.worker.tokenizer-id=cl100k_base", "--flotilla.worker.sim.block-size=64");
        assertThat(model.gatewayArgs()).containsExactly("--flotilla.gateway.default-model=my-model");
    }

    @Test
    void directoriesThatCannotServeAreRefusedInOneLine(@TempDir Path tmp) throws IOException {
        Path missing = tmp.resolve("missing");
        assertThatThrownBy(() -> ServedModel.parse("m", missing.toString(), null, true, STATE))
                .isInstanceOf(LauncherException.class).hasMessage("--model-dir " + missing + " does not exist");
        Path file = Files.writeString(tmp.resolve("file"), "x");
        assertThatThrownBy(() -> ServedModel.parse("m", file.toString(), null, true, STATE))
                .isInstanceOf(LauncherException.class).hasMessage("--model-dir " + file + " is not a directory");
        Path noTokenizer = modelDir(tmp.resolve("no-tokenizer"), null, LLAMA_CONFIG);
        assertThatThrownBy(() -> ServedModel.parse("m", noTokenizer.toString(), null, false, STATE))
                .isInstanceOf(LauncherException.class).hasMessage("--model-dir " + noTokenizer + " has no tokenizer.json"
                        + " (a HuggingFace fast tokenizer; AutoTokenizer.from_pretrained(...).save_pretrained(DIR) writes one)");
        Path noTemplate = modelDir(tmp.resolve("base-model"), BPE, "{\"eos_token\": \"<|eot_id|>\", \"chat_template\": null}");
        assertThatThrownBy(() -> ServedModel.parse("m", noTemplate.toString(), null, false, STATE))
                .isInstanceOf(LauncherException.class).hasMessage("--model-dir " + noTemplate + " has no chat template"
                        + " (chat_template.jinja, or chat_template in tokenizer_config.json); the gateway renders chat prompts with it");
        Path badConfig = modelDir(tmp.resolve("bad-config"), BPE, "{\"eos_token\": ");
        assertThatThrownBy(() -> ServedModel.parse("m", badConfig.toString(), null, false, STATE))
                .isInstanceOf(LauncherException.class)
                .hasMessageStartingWith("--model-dir " + badConfig + ": cannot read tokenizer_config.json: ")
                .hasMessageNotContaining("\n");
        Path badTokenizer = modelDir(tmp.resolve("bad-tokenizer"), "{\"model\": {\"vocab\": {\"a\": 0,", LLAMA_CONFIG);
        assertThatThrownBy(() -> ServedModel.parse("m", badTokenizer.toString(), null, true, STATE))
                .isInstanceOf(LauncherException.class)
                .hasMessageStartingWith("--model-dir " + badTokenizer + ": tokenizer.json is not valid JSON: ")
                .hasMessageNotContaining("\n");
        Path noVocab = modelDir(tmp.resolve("no-vocab"), "{\"added_tokens\": [], \"model\": {\"type\": \"BPE\"}}", LLAMA_CONFIG);
        assertThatThrownBy(() -> ServedModel.parse("m", noVocab.toString(), null, true, STATE))
                .isInstanceOf(LauncherException.class)
                .hasMessage("--model-dir " + noVocab + ": tokenizer.json has no model.vocab");
    }

    @Test
    void badNamesAndBlockSizesAreRefused() {
        assertThatThrownBy(() -> ServedModel.parse("my model", null, null, true, STATE)).isInstanceOf(LauncherException.class)
                .hasMessage("--model must be letters, digits and . _ - / : @ + (at most 256), not 'my model'");
        assertThatThrownBy(() -> ServedModel.parse("a]b", null, null, true, STATE)).isInstanceOf(LauncherException.class)
                .hasMessageContaining("not 'a]b'");
        assertThatThrownBy(() -> ServedModel.parse("", null, null, true, STATE)).isInstanceOf(LauncherException.class)
                .hasMessageContaining("not ''");
        assertThatThrownBy(() -> ServedModel.parse("m", null, 0, true, STATE)).isInstanceOf(LauncherException.class)
                .hasMessage("--block-size must be between 1 and 1024, not 0");
        assertThatThrownBy(() -> ServedModel.parse("m", null, 2048, true, STATE)).isInstanceOf(LauncherException.class)
                .hasMessage("--block-size must be between 1 and 1024, not 2048");
        assertThatThrownBy(() -> ServedModel.parse("m", " ", null, true, STATE)).isInstanceOf(LauncherException.class)
                .hasMessage("--model-dir must not be empty");
    }

    @Test
    void startWorkerStartsAWorkerInTheRecordedNamespace(@TempDir Path tmp) throws IOException {
        Path dir = modelDir(tmp.resolve("llama"), BPE, LLAMA_CONFIG);
        ServedModel model = ServedModel.parse(MODEL, dir.toString(), 32, true, STATE);
        ExternalEngines sim = ExternalEngines.parse("sim", null, null, null, null, 2);
        ClusterLayout layout = new ClusterLayout(2, 0, 0, "load", "k:9092", tmp, 4.0, model);
        ClusterState state = ClusterState.load(tmp);
        LocalCluster.record(state, layout, PlannerOptions.SHADOW, sim);
        state.save();

        ClusterState again = ClusterState.load(tmp);
        assertThat(ServedModel.load(again)).isEqualTo(model);
        ClusterLayout recorded = LocalCluster.recordedLayout(again, tmp);
        assertThat(recorded).isEqualTo(layout);
        assertThat(recorded.worker(1, ExternalEngines.load(again)).args()).isEqualTo(layout.worker(1, sim).args())
                .contains("--flotilla.worker.tokenizer-id=" + MODEL, "--flotilla.worker.sim.vocab-size=12");
    }

    @Test
    void aClusterRecordedBeforeModelsWereRecordedKeepsItsEngineBlockSize(@TempDir Path tmp) {
        ClusterState state = ClusterState.load(tmp);
        state.setLayout("engine", "openai-http");
        state.setLayout("engine-block-size", "32");
        state.save();
        assertThat(ServedModel.load(ClusterState.load(tmp)))
                .isEqualTo(new ServedModel("flotilla-sim", null, "cl100k_base", 32, null, null));
        assertThat(ServedModel.load(ClusterState.load(tmp.resolve("empty")))).isEqualTo(ServedModel.DEFAULT);
    }

    @Test
    void parsersGoToTheGatewayAndTheScriptToTheWorkersAndAreRecorded(@TempDir Path tmp) throws IOException {
        Path script = Files.writeString(tmp.resolve("replies.json"), "{\"rules\": []}");
        ServedModel model = ServedModel.DEFAULT.withBehaviour("llama3-json", "deepseek-r1", "replies.json", tmp);
        assertThat(model.gatewayArgs()).contains("--flotilla.gateway.models[flotilla-sim].tool-parser=llama3-json",
                "--flotilla.gateway.models[flotilla-sim].reasoning-parser=deepseek-r1");
        assertThat(model.workerArgs()).contains("--flotilla.worker.sim.script=" + script.toAbsolutePath().normalize());
        assertThat(ServedModel.DEFAULT.gatewayArgs()).noneMatch(a -> a.contains("parser"));

        ClusterState state = ClusterState.load(tmp);
        model.save(state);
        state.save();
        assertThat(ServedModel.load(ClusterState.load(tmp))).isEqualTo(model);
        assertThatThrownBy(() -> ServedModel.DEFAULT.withBehaviour(null, null, "missing.json", tmp))
                .isInstanceOf(LauncherException.class).hasMessageContaining("--sim-script");
    }
}
