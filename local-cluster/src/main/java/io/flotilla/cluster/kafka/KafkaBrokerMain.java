package io.flotilla.cluster.kafka;

import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Entry point of a broker child process: formats the log directory when it is new, then runs
 * {@code kafka.Kafka}. With {@code --exit-with-parent} it exits when its standard input closes,
 * so a test JVM that dies (even by SIGKILL) never leaves a broker behind.
 *
 * <p>Usage: {@code KafkaBrokerMain server.properties cluster-id [--exit-with-parent]}
 */
public final class KafkaBrokerMain {

    private KafkaBrokerMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: KafkaBrokerMain server.properties cluster-id [--exit-with-parent]");
            System.exit(2);
        }
        String config = args[0];
        String clusterId = args[1];
        boolean exitWithParent = args.length > 2 && "--exit-with-parent".equals(args[2]);
        if (exitWithParent) {
            Thread watchdog = new Thread(() -> {
                try (InputStream in = System.in) {
                    while (in.read() >= 0) {
                        // parent keeps the pipe open; any byte is ignored
                    }
                } catch (Exception ignored) {
                    // a broken pipe means the same as end of stream
                }
                System.exit(0); // runs Kafka's shutdown hook
            }, "parent-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
        }
        format(config, clusterId);
        Class.forName("kafka.Kafka").getMethod("main", String[].class).invoke(null, (Object) new String[]{config});
    }

    /** Formats the metadata log directory once; a formatted directory is kept (restart keeps data). */
    private static void format(String config, String clusterId) throws Exception {
        java.util.Properties p = new java.util.Properties();
        try (var r = Files.newBufferedReader(Path.of(config))) {
            p.load(r);
        }
        Path logDir = Path.of(p.getProperty("log.dirs"));
        if (Files.exists(logDir.resolve("meta.properties"))) {
            return;
        }
        Method execute = Class.forName("kafka.tools.StorageTool").getMethod("execute", String[].class, PrintStream.class);
        Object rc = execute.invoke(null, new String[]{"format", "-t", clusterId, "-c", config, "--standalone"}, System.out);
        if (!Integer.valueOf(0).equals(rc)) {
            throw new IllegalStateException("kafka storage format failed with exit code " + rc);
        }
    }
}
