package io.flotilla.transfer;

import io.flotilla.transfer.bench.PeerProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A {@link PeerProcess} in a child JVM, driven line by line. */
final class Peer implements AutoCloseable {

    private final Process process;
    private final BufferedReader out;
    private final PrintStream in;
    final byte[] metadata;
    final long regionId;
    final Implementation engine;

    /** @param jvmOptions extra options for the child JVM, e.g. {@code -Dflotilla.transfer.native=false} */
    Peer(String name, String engine, String backends, long regionBytes, String... jvmOptions) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of(jvmOptions));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), PeerProcess.class.getName(), name, engine, backends, Long.toString(regionBytes)));
        process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        String ready = out.readLine();
        if (ready == null || !ready.startsWith("READY ")) {
            process.destroyForcibly();
            throw new IOException("peer did not start: " + ready);
        }
        String[] w = ready.split(" ");
        metadata = Base64.getDecoder().decode(w[1]);
        regionId = Long.parseLong(w[2]);
        this.engine = Implementation.valueOf(w[3]);
    }

    /** Sends one command and returns the words after OK; fails on ERR. */
    String call(String command) throws IOException {
        in.println(command);
        String line = out.readLine();
        if (line == null || !line.startsWith("OK")) {
            throw new IOException(command + " -> " + line);
        }
        return line.substring(2).trim();
    }

    String load(byte[] remoteMetadata) throws IOException {
        return call("LOAD " + Base64.getEncoder().encodeToString(remoteMetadata));
    }

    long crc(long offset, long length) throws IOException {
        return Long.parseUnsignedLong(call("CRC " + offset + " " + length), 16);
    }

    /** Drained notifications as "agent:text" strings. */
    List<String> notifications() throws IOException {
        String[] w = call("NOTIFS").split(" ");
        List<String> out = new ArrayList<>();
        for (int i = 1; i < w.length; i++) {
            int colon = w[i].indexOf(':');
            out.add(w[i].substring(0, colon) + ":" + new String(Base64.getDecoder().decode(w[i].substring(colon + 1)), StandardCharsets.UTF_8));
        }
        return out;
    }

    @Override
    public void close() throws Exception {
        try {
            call("QUIT");
        } catch (IOException ignored) {
            // already gone
        }
        in.close();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
