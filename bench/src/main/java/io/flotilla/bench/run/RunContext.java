package io.flotilla.bench.run;

/**
 * What a run was pointed at and how; copied into every report.
 *
 * @param label       run name ({@code bench compare} uses the mode, e.g. {@code kv} or {@code kv/pd})
 * @param url         gateway base URL
 * @param model       model sent in every request
 * @param routerMode  the router's mode during the run, {@code unknown} when it could not be read
 * @param disaggHint  value of the {@code x-flotilla-disagg} header, or {@code null} when not sent
 * @param seed        workload seed
 * @param queueTimeout the {@code x-flotilla-queue-timeout} sent, or null (the gateway's default)
 * @param tenants     the {@code --tenants} spec, or null
 * @param priority    the {@code --priority} spec, or null
 */
public record RunContext(String label, String url, String model, String routerMode, String disaggHint, long seed,
                         RunConfig config, java.time.Duration queueTimeout, String tenants, String priority) {

    public RunContext(String label, String url, String model, String routerMode, String disaggHint, long seed,
                      RunConfig config) {
        this(label, url, model, routerMode, disaggHint, seed, config, null, null, null);
    }
}
