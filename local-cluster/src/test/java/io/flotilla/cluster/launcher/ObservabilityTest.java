package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The launcher's tracing and log flags: what each service is given, what is refused, what start-worker reads back. */
class ObservabilityTest {

    private static final ServiceSpec ROUTER = new ServiceSpec("router", "router-service", Map.of("grpc", 7001), 8082,
            List.of("--flotilla.router.mode=kv"), "256m");

    @Test
    void tracingGivesEveryServiceTheExporterItsSamplingAndAShortDelay() {
        ServiceSpec traced = Observability.parse(true, null, 0.25, null).apply(ROUTER);
        assertThat(traced.args()).containsExactly("--flotilla.router.mode=kv",
                "--management.tracing.export.enabled=true",
                "--management.tracing.sampling.probability=0.25",
                "--management.tracing.export.zipkin.endpoint=http://127.0.0.1:9411/api/v2/spans",
                "--management.opentelemetry.tracing.export.schedule-delay=1s");
        assertThat(traced.heap()).isEqualTo("256m");
    }

    @Test
    void withoutFlagsNothingChangesAndJsonLogsAloneOnlySwitchesTheFormat() {
        assertThat(Observability.parse(false, null, null, null).apply(ROUTER)).isSameAs(ROUTER);
        assertThat(Observability.parse(false, null, null, "logstash").apply(ROUTER).args())
                .containsExactly("--flotilla.router.mode=kv", "--logging.structured.format.console=logstash");
        Observability external = Observability.parse(false, "http://zipkin:9411/api/v2/spans", null, null);
        assertThat(external.launchZipkin()).isFalse();
        assertThat(external.apply(ROUTER).args()).contains("--management.tracing.sampling.probability=1.0",
                "--management.tracing.export.zipkin.endpoint=http://zipkin:9411/api/v2/spans");
    }

    @Test
    void aFlagThatWouldBeIgnoredIsRefused() {
        assertThatThrownBy(() -> Observability.parse(false, null, 0.5, null)).isInstanceOf(LauncherException.class)
                .hasMessageContaining("--tracing-sample needs --tracing or --tracing-endpoint");
        assertThatThrownBy(() -> Observability.parse(true, "http://zipkin:9411/api/v2/spans", null, null))
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> Observability.parse(true, null, 1.5, null)).hasMessageContaining("between 0 and 1");
        assertThatThrownBy(() -> Observability.parse(false, "zipkin:9411", null, null)).hasMessageContaining("http(s) URL");
        assertThatThrownBy(() -> Observability.parse(false, null, null, "xml")).hasMessageContaining("--json-logs");
    }

    @Test
    void startWorkerReadsBackWhatUpRecorded(@TempDir Path dir) {
        ClusterState state = ClusterState.load(dir);
        Observability up = Observability.parse(true, null, 0.5, "ecs");
        up.save(state);
        state.save();
        assertThat(Observability.load(ClusterState.load(dir))).isEqualTo(up);
        assertThat(Observability.load(ClusterState.load(dir.resolve("none")))).isEqualTo(Observability.NONE);
    }
}
