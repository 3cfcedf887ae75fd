package io.flotilla.bench;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class BenchCliTest {

    private record Result(int code, String out, String err) {
    }

    private static Result run(String... args) {
        picocli.CommandLine cl = BenchCli.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new Result(code, out.toString(), err.toString());
    }

    @Test
    void exactlyOneWorkloadMustBeChosen() {
        Result none = run("--url", "http://127.0.0.1:1");
        assertThat(none.code()).isNotZero();
        assertThat(none.err()).contains("choose exactly one workload");

        Result two = run("--groups", "2", "--sessions", "2");
        assertThat(two.code()).isNotZero();
        assertThat(two.err()).contains("choose exactly one workload");
    }

    @Test
    void anUnreachableGatewayIsReportedWithoutAStackTrace() {
        Result r = run("--groups", "1", "--url", "http://127.0.0.1:1", "--quiet");
        assertThat(r.code()).isNotZero();
        assertThat(r.err()).contains("flotilla bench:", "/v1/models").doesNotContain("\tat ");
    }

    @Test
    void helpListsTheCompareSubcommandAndItsOptions() {
        assertThat(run("--help").out()).contains("compare", "--trace", "--speedup", "--slo-ttft-ms", "--arrival");
        assertThat(run("compare", "--help").out()).contains("--modes", "--router-grpc", "--settle-ms", "--disagg", "--trace");
    }

    @Test
    void durationsAcceptSecondsUnitsAndIso() {
        RunOptions.DurationConverter c = new RunOptions.DurationConverter();
        assertThat(c.convert("90")).isEqualTo(Duration.ofSeconds(90));
        assertThat(c.convert("90s")).isEqualTo(Duration.ofSeconds(90));
        assertThat(c.convert("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(c.convert("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(c.convert("1.5h")).isEqualTo(Duration.ofMinutes(90));
        assertThat(c.convert("PT2M")).isEqualTo(Duration.ofMinutes(2));
    }
}
