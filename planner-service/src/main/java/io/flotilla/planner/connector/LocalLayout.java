package io.flotilla.planner.connector;

import io.flotilla.planner.core.Pool;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * Which role worker N has in a local cluster: read from the launcher's state file
 * ({@code .flotilla/cluster.properties}, keys {@code layout.prefill}, {@code layout.decode}). As in the
 * launcher: without prefill or decode workers every worker is aggregated; otherwise workers
 * 0 … prefill−1 are prefill workers and every later number is a decode worker.
 */
public record LocalLayout(int prefill, int decode) {

    public static LocalLayout read(Path home) {
        Path file = home.resolve(".flotilla").resolve("cluster.properties");
        if (!Files.exists(file)) {
            return new LocalLayout(0, 0);
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        return new LocalLayout(Integer.parseInt(p.getProperty("layout.prefill", "0").trim()),
                Integer.parseInt(p.getProperty("layout.decode", "0").trim()));
    }

    public Pool poolOf(int n) {
        if (prefill == 0 && decode == 0) {
            return Pool.AGGREGATED;
        }
        return n < prefill ? Pool.PREFILL : Pool.DECODE;
    }
}
