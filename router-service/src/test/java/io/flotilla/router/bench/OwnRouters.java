package io.flotilla.router.bench;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.protocol.Ports;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Kafka broker and two router processes of this checkout ({@code router-service-exec.jar}) on free
 * ports, for benchmarks that must not take the local cluster's ports (and so need no cluster lock).
 */
final class OwnRouters implements AutoCloseable {

    private final KafkaBroker broker;
    private final List<Process> routers = new ArrayList<>();
    private final int[] grpcPorts = new int[2];
    private final int[] managementPorts = new int[2];

    /** @param routerArgs more router settings, space-separated, e.g. {@code --flotilla.router.capacity.coalesce=0ms} */
    OwnRouters(String routerArgs) throws Exception {
        Path dir = Files.createTempDirectory("replica-bench-");
        broker = new KafkaBroker(KafkaBroker.Config.forTests(dir)).start();
        String kafkaAddress = broker.bootstrapServers();
        String jar = Path.of("router-service/target/router-service-exec.jar").toAbsolutePath().toString();
        for (int n = 0; n < 2; n++) {
            grpcPorts[n] = KafkaBroker.freePort();
            managementPorts[n] = KafkaBroker.freePort();
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "-XX:+UseSerialGC", "-XX:MetaspaceSize=128m", "-jar", jar,
                    "--spring.kafka.bootstrap-servers=" + kafkaAddress, "--server.port=" + managementPorts[n],
                    "--flotilla.router.name=" + Ports.routerName(n), "--flotilla.router.grpc-port=" + grpcPorts[n],
                    "--flotilla.router.indexer.address=127.0.0.1:1"));
            for (String arg : routerArgs.split(" ")) {
                if (!arg.isBlank()) {
                    cmd.add(arg); // e.g. --flotilla.router.capacity.coalesce=0ms
                }
            }
            routers.add(new ProcessBuilder(cmd)
                    .redirectErrorStream(true).redirectOutput(dir.resolve("router-" + n + ".log").toFile()).start());
        }
        HttpClient http = HttpClient.newHttpClient();
        for (int n = 0; n < 2; n++) {
            URI health = URI.create("http://127.0.0.1:" + managementPorts[n] + "/actuator/health");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (true) {
                try {
                    if (http.send(HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                        break;
                    }
                } catch (IOException notYet) {
                    // starting
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("router " + n + " did not start; see " + dir);
                }
                Thread.sleep(250);
            }
        }
        System.out.println("own cluster: Kafka " + kafkaAddress + ", routers on gRPC " + grpcPorts[0] + " and " + grpcPorts[1]);
    }

    @Override
    public void close() throws Exception {
        for (Process p : routers) {
            p.destroy();
            p.waitFor(20, TimeUnit.SECONDS);
        }
        broker.closeAndDelete();
    }

    String kafkaAddress() {
        return broker.bootstrapServers();
    }

    int[] grpcPorts() {
        return grpcPorts.clone();
    }

    int[] managementPorts() {
        return managementPorts.clone();
    }
}
