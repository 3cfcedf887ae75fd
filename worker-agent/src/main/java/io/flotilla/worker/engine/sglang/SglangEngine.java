package io.flotilla.worker.engine.sglang;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.openai.ChunkDecoder;
import io.flotilla.worker.engine.openai.OpenAiEngineSettings;
import io.flotilla.worker.engine.openai.RemoteEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;

/**
 * An {@link io.flotilla.worker.engine.Engine} in front of an SGLang server through its native API:
 * {@code POST /generate} with {@code input_ids}, streamed ({@link GenerateBody},
 * {@link GenerateChunkDecoder}); capacity from {@code GET /get_server_info}'s {@code max_total_num_tokens};
 * load from its Prometheus metrics ({@code sglang:num_running_reqs}, {@code sglang:num_queue_reqs},
 * {@code sglang:token_usage}; the server needs {@code --enable-metrics}); KV events from
 * {@code --kv-events-config} (SGLang publishes vLLM's ZMQ wire format: {@code [topic, seq, msgpack batch]},
 * batches {@code [ts, events, attn_dp_rank]}, a replay ROUTER socket). Everything engine-independent is
 * {@link RemoteEngine}'s. SGLang's disaggregation (its own bootstrap server) is not driven from here: a
 * prefill/decode pair of SGLang workers prefills locally.
 *
 * <p>The block size must equal SGLang's {@code --page-size} (default 1): its KV events carry one page per
 * block, and pages of another size are counted as block-size mismatches, never guessed.
 */
public final class SglangEngine extends RemoteEngine {

    private static final Logger log = LoggerFactory.getLogger(SglangEngine.class);

    private final String serverInfoPath;
    private volatile SglangServerInfo info;
    private volatile long nextInfoAttemptNanos;
    private int warnedPageSize;

    private SglangEngine(OpenAiEngineSettings settings, String serverInfoPath, BlockHasher hasher, Clock clock,
                         EngineListeners listeners, String name) {
        super(settings, hasher, clock, listeners, name);
        this.serverInfoPath = serverInfoPath;
    }

    /** An adapter for the SGLang server {@code settings} names, scraping it (and reading its KV events) from now on. */
    public static SglangEngine start(OpenAiEngineSettings settings, String serverInfoPath, BlockHasher hasher, Clock clock,
                                     EngineListeners listeners, String name) {
        SglangEngine engine = new SglangEngine(settings, serverInfoPath, hasher, clock, listeners, name);
        engine.startScraping();
        return engine;
    }

    @Override
    protected String generatePath() {
        return "/generate";
    }

    @Override
    protected String streamBody(EngineRequest request, String kvTransferParams) {
        return GenerateBody.stream(request);
    }

    @Override
    protected ChunkDecoder decoder(EngineRequest request) {
        return new GenerateChunkDecoder();
    }

    /** A restarted server may have another pool: read the server information again. */
    @Override
    protected void onEngineRecovered() {
        info = null;
        nextInfoAttemptNanos = 0;
    }

    /** SGLang's native sampling parameters and JSON-schema output ({@link GenerateBody#CAPABILITIES}). */
    @Override
    public io.flotilla.protocol.v1.EngineCapabilities capabilities() {
        return GenerateBody.CAPABILITIES;
    }

    /**
     * {@code max_total_num_tokens} / block size from the server information, read once the engine is
     * healthy (again after each recovery; a failed read is retried after 5 s); the metrics' view until then.
     */
    @Override
    public int reportedKvBlocks() {
        SglangServerInfo i = info;
        if (i == null && scraper().healthy() && System.nanoTime() >= nextInfoAttemptNanos) {
            i = readServerInfo();
        }
        return i != null && i.maxTotalTokens() > 0 ? i.blocks(hasher.blockSize()) : super.reportedKvBlocks();
    }

    private synchronized SglangServerInfo readServerInfo() {
        if (info != null) {
            return info;
        }
        try {
            HttpResponse<String> resp = http.controlCall(serverInfoPath, false, Duration.ofSeconds(5));
            if (resp.statusCode() == 200) {
                SglangServerInfo read = SglangServerInfo.parse(resp.body());
                checkPageSize(read.pageSize());
                info = read;
                log.info("{}: SGLang KV pool of {} tokens ({} blocks of {}), page size {}", name, read.maxTotalTokens(),
                        read.blocks(hasher.blockSize()), hasher.blockSize(), read.pageSize());
                return read;
            }
            log.warn("{}: {} answered {}", name, serverInfoPath, resp.statusCode());
        } catch (IOException | RuntimeException e) {
            log.warn("{}: cannot read {}: {}", name, serverInfoPath, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        nextInfoAttemptNanos = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        return null;
    }

    private void checkPageSize(int pageSize) {
        if (pageSize > 0 && pageSize != hasher.blockSize() && pageSize != warnedPageSize) {
            warnedPageSize = pageSize;
            log.warn("""

                    ********************************************************************************
                    PAGE SIZE MISMATCH: the SGLang server at {} uses --page-size {}, but this worker
                    hashes KV blocks with block size {}. Every KV event of this engine will be rejected
                    (counted as blockSizeMismatch) and routers will see no cache on this worker.
                    Start SGLang with --page-size {} or set flotilla.worker.sim.block-size={}.
                    ********************************************************************************""",
                    settings.url(), pageSize, hasher.blockSize(), hasher.blockSize(), pageSize);
        }
    }
}
