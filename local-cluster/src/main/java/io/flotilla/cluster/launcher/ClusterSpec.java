package io.flotilla.cluster.launcher;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What one {@link LocalCluster#up(ClusterSpec)} starts: the pools, the routing, where Kafka is, the served models
 * and how each kind of service runs. Built with {@link #builder()}; every setting has the default
 * {@code bin/flotilla up} has without the matching flag, so a caller names only what it changes.
 *
 * @param workers     aggregated workers per model (ignored when {@code prefill} or {@code decode} is positive)
 * @param prefill     prefill workers per model
 * @param decode      decode workers per model
 * @param routerMode  the routers' initial mode ({@code kv}, {@code load}, {@code round-robin}, {@code random})
 * @param externalKafka an existing Kafka's bootstrap address, or null to start the launcher's own broker
 * @param kafkaConfig a properties file of {@code spring.kafka.*} client settings every service imports (security
 *                    protocol, SASL, TLS), or null
 * @param simSpeedup  simulated engines run this many times faster than their timing model
 * @param planner     how the planners run (connector, interval)
 * @param engines     the engines external workers stand in front of, or {@link ExternalEngines#NONE} (simulated)
 * @param models      the served models, side by side, each with its own pool and planner; the first is the
 *                    gateways' default
 * @param routers     router replicas sharing bookings over flotilla.router-sync
 * @param kvbm        the simulated workers' KV tiers below the device and their device pool size
 * @param gateways    the gateway replicas and where they share their limits
 * @param timeout     how long {@code up} waits for every service to answer healthy
 */
public record ClusterSpec(int workers, int prefill, int decode, String routerMode, String externalKafka, Path kafkaConfig,
                          double simSpeedup, PlannerOptions planner, ExternalEngines engines, List<ServedModel> models,
                          int routers, KvbmOptions kvbm, GatewayOptions gateways, Duration timeout) {

    public ClusterSpec {
        Objects.requireNonNull(routerMode, "routerMode");
        Objects.requireNonNull(planner, "planner");
        Objects.requireNonNull(engines, "engines");
        models = List.copyOf(models);
        Objects.requireNonNull(kvbm, "kvbm");
        Objects.requireNonNull(gateways, "gateways");
        Objects.requireNonNull(timeout, "timeout");
    }

    /** A spec with {@code bin/flotilla up}'s defaults: 2 aggregated workers, kv routing, the launcher's Kafka, … */
    public static Builder builder() {
        return new Builder();
    }

    /** This spec as a builder, to change a setting or two. */
    public Builder toBuilder() {
        return new Builder().workers(workers).prefill(prefill).decode(decode).routerMode(routerMode)
                .externalKafka(externalKafka).kafkaConfig(kafkaConfig).simSpeedup(simSpeedup).planner(planner)
                .engines(engines).models(models).routers(routers).kvbm(kvbm).gateways(gateways).timeout(timeout);
    }

    /** Builds a {@link ClusterSpec}; each setter replaces one setting and returns this builder. */
    public static final class Builder {

        private int workers = 2;
        private int prefill;
        private int decode;
        private String routerMode = "kv";
        private String externalKafka;
        private Path kafkaConfig;
        private double simSpeedup = 1.0;
        private PlannerOptions planner = PlannerOptions.SHADOW;
        private ExternalEngines engines = ExternalEngines.NONE;
        private List<ServedModel> models = List.of(ServedModel.DEFAULT);
        private int routers = 1;
        private KvbmOptions kvbm = KvbmOptions.NONE;
        private GatewayOptions gateways = GatewayOptions.ONE;
        private Duration timeout = Duration.ofSeconds(180);

        private Builder() {
        }

        public Builder workers(int aggregatedPerModel) {
            this.workers = aggregatedPerModel;
            return this;
        }

        /** A disaggregated layout: {@code prefill} prefill and {@code decode} decode workers per model. */
        public Builder prefillDecode(int prefill, int decode) {
            return prefill(prefill).decode(decode);
        }

        public Builder prefill(int perModel) {
            this.prefill = perModel;
            return this;
        }

        public Builder decode(int perModel) {
            this.decode = perModel;
            return this;
        }

        public Builder routerMode(String mode) {
            this.routerMode = mode;
            return this;
        }

        public Builder externalKafka(String bootstrap) {
            this.externalKafka = bootstrap;
            return this;
        }

        public Builder kafkaConfig(Path clientProperties) {
            this.kafkaConfig = clientProperties;
            return this;
        }

        public Builder simSpeedup(double speedup) {
            this.simSpeedup = speedup;
            return this;
        }

        public Builder planner(PlannerOptions options) {
            this.planner = options;
            return this;
        }

        public Builder engines(ExternalEngines external) {
            this.engines = external;
            return this;
        }

        public Builder model(ServedModel model) {
            return models(List.of(model));
        }

        public Builder models(List<ServedModel> served) {
            this.models = served;
            return this;
        }

        public Builder routers(int replicas) {
            this.routers = replicas;
            return this;
        }

        public Builder kvbm(KvbmOptions tiers) {
            this.kvbm = tiers;
            return this;
        }

        public Builder gateways(GatewayOptions options) {
            this.gateways = options;
            return this;
        }

        public Builder timeout(Duration healthy) {
            this.timeout = healthy;
            return this;
        }

        public ClusterSpec build() {
            return new ClusterSpec(workers, prefill, decode, routerMode, externalKafka, kafkaConfig, simSpeedup, planner,
                    engines, models, routers, kvbm, gateways, timeout);
        }
    }
}
