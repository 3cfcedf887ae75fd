package io.flotilla.cluster.launcher;

import io.flotilla.cluster.kafka.KafkaBroker;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code bin/flotilla kafka}: a single-node KRaft broker of its own, apart from any cluster, for drills
 * against "the company's Kafka": auto-create off, no topics, and with {@code --sasl-user} a SASL_PLAINTEXT
 * (PLAIN) listener that accepts only that user. It writes {@code client.properties} (the settings for
 * {@code up --kafka 127.0.0.1:PORT --kafka-config DIR/client.properties}) and runs until Ctrl-C, or with
 * {@code -d} in the background (stop it with {@code kill PID}; the pid is printed and in {@code DIR/broker.pid}).
 */
@Command(name = "kafka", description = "Start a standalone Kafka broker (auto-create off, optionally SASL) for drills.")
final class KafkaCommand implements Callable<Integer> {

    @Option(names = "--dir", required = true, paramLabel = "DIR", description = "Data, logs and client.properties go here.")
    Path dir;
    @Option(names = "--port", defaultValue = "19092", description = "Client port (default ${DEFAULT-VALUE}).")
    int port;
    @Option(names = "--sasl-user", paramLabel = "NAME", description = "Require SASL_PLAINTEXT (PLAIN) and accept this user.")
    String saslUser;
    @Option(names = "--sasl-password", paramLabel = "SECRET", description = "The user's password (with --sasl-user).")
    String saslPassword;
    @Option(names = {"-d", "--detach"}, description = "Leave the broker running in the background and return.")
    boolean detach;

    @Override
    public Integer call() throws IOException, InterruptedException {
        Path data = FlotillaCli.workingDir().resolve(dir).toAbsolutePath().normalize();
        if ((saslUser == null) != (saslPassword == null)) {
            throw new LauncherException("--sasl-user and --sasl-password go together");
        }
        if (ProcessControl.portInUse(port)) {
            throw new LauncherException("port " + port + " is already in use");
        }
        KafkaBroker.Config config = new KafkaBroker.Config(data, port, System.getProperty("java.class.path"), "384m",
                !detach, false, Duration.ofSeconds(90));
        if (saslUser != null) {
            config = config.withSasl(new KafkaBroker.SaslUser(saslUser, saslPassword));
        }
        KafkaBroker broker = new KafkaBroker(config).start();
        Path client = data.resolve("client.properties");
        KafkaClientFile.write(client, broker.springProperties());
        Files.writeString(data.resolve("broker.pid"), Long.toString(broker.pid()));
        System.out.printf("Kafka at %s (%s, auto-create off, no topics), pid %d, log %s%n", broker.bootstrapServers(),
                saslUser == null ? "PLAINTEXT" : "SASL_PLAINTEXT user " + saslUser, broker.pid(), broker.logFile());
        System.out.printf("client settings: %s%n  bin/flotilla up --kafka %s --kafka-config %s%n", client,
                broker.bootstrapServers(), client);
        if (detach) {
            System.out.printf("stop it with: kill %d%n", broker.pid());
            return 0;
        }
        System.out.println("press Ctrl-C to stop");
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.close();
            stopped.countDown();
        }, "kafka-stop"));
        stopped.await();
        return 0;
    }
}
