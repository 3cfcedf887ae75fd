package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code bin/flotilla up --engine openai-http ...}: flag checks and the workers' arguments. */
class ExternalEnginesTest {

    private static final Path STATE = Path.of("/tmp/flotilla-test-state");

    @Test
    void workerNFrontsEngineN() {
        ExternalEngines engines = ExternalEngines.parse("openai-http", "http://127.0.0.1:8200,http://gpu-1:8000",
                "tcp://127.0.0.1:5557, tcp://gpu-1:5557", "tcp://127.0.0.1:5558,tcp://gpu-1:5558", "meta-llama/Llama-3.1-8B",
                2);
        List<ServiceSpec> services = new ClusterLayout(2, 0, 0, "kv", "k:9092", STATE, 1.0,
                ServedModel.parse(null, null, 32, false, STATE)).services(PlannerOptions.SHADOW, engines);

        assertThat(byName(services, "worker-0").args()).contains(
                "--flotilla.worker.id=worker-0",
                "--flotilla.worker.engine=openai-http",
                "--flotilla.worker.http.url=http://127.0.0.1:8200",
                "--flotilla.worker.http.kv-events=tcp://127.0.0.1:5557",
                "--flotilla.worker.http.kv-events-replay=tcp://127.0.0.1:5558",
                "--flotilla.worker.http.served-model=meta-llama/Llama-3.1-8B",
                "--flotilla.worker.sim.block-size=32");
        assertThat(byName(services, "worker-1").args()).contains(
                "--flotilla.worker.http.url=http://gpu-1:8000",
                "--flotilla.worker.http.kv-events=tcp://gpu-1:5557",
                "--flotilla.worker.http.kv-events-replay=tcp://gpu-1:5558");
        assertThat(byName(services, "gateway").args()).noneMatch(a -> a.contains("engine"));
    }

    @Test
    void inAPdLayoutTheUrlsGoToThePrefillWorkersFirst() {
        ExternalEngines engines = ExternalEngines.parse("openai-http", "http://p:8100,http://d1:8200,http://d2:8300",
                null, null, null, 3);
        ClusterLayout layout = new ClusterLayout(0, 1, 2, "kv", "k:9092", STATE);

        assertThat(layout.worker(0, engines).args())
                .contains("--flotilla.worker.role=prefill", "--flotilla.worker.http.url=http://p:8100");
        assertThat(layout.worker(2, engines).args())
                .contains("--flotilla.worker.role=decode", "--flotilla.worker.http.url=http://d2:8300");
        assertThat(layout.worker(1, engines).args()).as("no KV events or served model given")
                .noneMatch(a -> a.contains("kv-events") || a.contains("served-model"));
        assertThatThrownBy(() -> layout.worker(3, engines)).isInstanceOf(LauncherException.class)
                .hasMessage("worker-3 has no external engine (--engine-url names 3)");
    }

    @Test
    void simulatedWorkersGetNoEngineArguments() {
        ExternalEngines engines = ExternalEngines.parse("sim", null, null, null, null, 2);
        assertThat(engines.external()).isFalse();
        assertThat(new ClusterLayout(2, 0, 0, "kv", "k:9092", STATE).worker(0, engines).args())
                .noneMatch(a -> a.startsWith("--flotilla.worker.engine") || a.startsWith("--flotilla.worker.http"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', nullValues = "-", textBlock = """
            one URL for two workers       | openai-http | http://a:1                | -                     | -            | -      | --engine-url names 1 engine URL for 2 workers; give one per worker, comma-separated, in worker order (prefill workers first)
            three URLs for two workers    | openai-http | http://a:1,http://b:1,http://c:1 | -             | -            | -      | --engine-url names 3 engine URLs for 2 workers; give one per worker, comma-separated, in worker order (prefill workers first)
            KV endpoints do not match     | openai-http | http://a:1,http://b:1     | tcp://a:5557          | -            | -      | --kv-events names 1 KV event endpoint for 2 workers; give one per worker, comma-separated, in worker order (prefill workers first)
            replay endpoints do not match | openai-http | http://a:1,http://b:1     | tcp://a:1,tcp://b:1   | tcp://a:2    | -      | --kv-events-replay names 1 replay endpoint for 2 workers; give one per worker, comma-separated, in worker order (prefill workers first)
            replay without KV events      | openai-http | http://a:1,http://b:1     | -                     | tcp://a:2,tcp://b:2 | -  | --kv-events-replay needs --kv-events
            no URL                        | openai-http | -                         | -                     | -            | -      | --engine openai-http needs --engine-url with one URL per worker (2)
            empty entry                   | openai-http | 'http://a:1,,http://b:1'  | -                     | -            | -      | --engine-url has an empty entry: http://a:1,,http://b:1
            not http                      | openai-http | http://a:1,ftp://b:1      | -                     | -            | -      | --engine-url: ftp://b:1 is not an http:// or https:// URL with a host
            not a ZMQ endpoint            | openai-http | http://a:1,http://b:1     | tcp://a:1,http://b:2  | -            | -      | --kv-events: http://b:2 is not a ZMQ endpoint (tcp://HOST:PORT or ipc://PATH)
            blank served model            | openai-http | http://a:1,http://b:1     | -                     | -            | ' '    | --served-model must not be blank
            engine flags on sim workers   | sim         | http://a:1,http://b:1     | -                     | -            | -      | --engine-url, --kv-events, --kv-events-replay and --served-model need --engine openai-http or --engine sglang
            served model on sim workers   | sim         | -                         | -                     | -            | served | --engine-url, --kv-events, --kv-events-replay and --served-model need --engine openai-http or --engine sglang
            URLs for in-process engines   | llama-cpp   | http://a:1,http://b:1     | -                     | -            | -      | --engine-url, --kv-events, --kv-events-replay and --served-model need --engine openai-http or --engine sglang
            unknown engine                | vllm        | http://a:1,http://b:1     | -                     | -            | -      | --engine must be sim, openai-http, sglang or llama-cpp, not vllm
            """)
    void flagsThatDoNotFitAreRefusedInOneLine(String name, String engine, String urls, String kv, String replay,
                                              String servedModel, String message) {
        assertThatThrownBy(() -> ExternalEngines.parse(engine, urls, kv, replay, servedModel, 2))
                .isInstanceOf(LauncherException.class).hasMessage(message);
    }

    @Test
    void sglangWorkersGetTheNativeAdapter(@TempDir Path dir) {
        ExternalEngines engines = ExternalEngines.parse("sglang", "http://a:1", "tcp://a:5557", null, null, 1);
        assertThat(engines.workerArgs(0)).contains("--flotilla.worker.engine=sglang", "--flotilla.worker.http.url=http://a:1");
        ClusterState state = ClusterState.load(dir);
        engines.save(state);
        state.save();
        assertThat(ExternalEngines.load(ClusterState.load(dir))).isEqualTo(engines);
    }

    @Test
    void theStateRemembersTheEnginesForStartWorker(@TempDir Path dir) {
        ExternalEngines engines = ExternalEngines.parse("openai-http", "http://a:1,http://b:2", "tcp://a:5557,tcp://b:5557",
                null, "served", 2);
        ClusterState state = ClusterState.load(dir);
        engines.save(state);
        state.save();
        assertThat(ExternalEngines.load(ClusterState.load(dir))).isEqualTo(engines);

        ClusterState sim = ClusterState.load(dir.resolve("other"));
        ExternalEngines.NONE.save(sim);
        assertThat(ExternalEngines.load(sim)).isEqualTo(ExternalEngines.NONE);
    }

    private static ServiceSpec byName(List<ServiceSpec> services, String name) {
        return services.stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
    }
}
