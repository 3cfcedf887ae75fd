package io.flotilla.protocol.kafka;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.PlannerDecision;
import io.flotilla.protocol.v1.RequestRecord;
import io.flotilla.protocol.v1.RouterSync;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;
import org.apache.kafka.common.serialization.Deserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads a protobuf message; a record that does not parse is logged, counted and returned as
 * {@code null}, so one bad record never puts a consumer into a crash loop. Consumers skip nulls.
 * A {@code null} value (a compaction tombstone) is also returned as {@code null}.
 */
public class ProtoDeserializer<T extends MessageLite> implements Deserializer<T> {

    private static final Logger log = LoggerFactory.getLogger(ProtoDeserializer.class);
    private static final AtomicLong MALFORMED = new AtomicLong();

    private final Parser<T> parser;

    public ProtoDeserializer(Parser<T> parser) {
        this.parser = parser;
    }

    /** Records that failed to parse in this process, over every topic. */
    public static long malformedRecords() {
        return MALFORMED.get();
    }

    @Override
    public T deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        try {
            return parser.parseFrom(data);
        } catch (InvalidProtocolBufferException e) {
            long n = MALFORMED.incrementAndGet();
            if (Long.bitCount(n) == 1) { // log the 1st, 2nd, 4th, 8th … occurrence, not a flood
                log.warn("dropping malformed record on {} ({} bytes): {} [{} malformed so far]",
                        topic, data.length, e.getMessage(), n);
            }
            return null;
        }
    }

    /** No-argument deserializers, for configuration by class name. */
    public static final class KvEventBatches extends ProtoDeserializer<KvEventBatch> {
        public KvEventBatches() {
            super(KvEventBatch.parser());
        }
    }

    public static final class WorkerStatuses extends ProtoDeserializer<WorkerStatus> {
        public WorkerStatuses() {
            super(WorkerStatus.parser());
        }
    }

    public static final class WorkerLoads extends ProtoDeserializer<WorkerLoad> {
        public WorkerLoads() {
            super(WorkerLoad.parser());
        }
    }

    public static final class GatewayLoads extends ProtoDeserializer<GatewayLoad> {
        public GatewayLoads() {
            super(GatewayLoad.parser());
        }
    }

    public static final class RequestRecords extends ProtoDeserializer<RequestRecord> {
        public RequestRecords() {
            super(RequestRecord.parser());
        }
    }

    public static final class RouterSyncs extends ProtoDeserializer<RouterSync> {
        public RouterSyncs() {
            super(RouterSync.parser());
        }
    }

    public static final class PlannerDecisions extends ProtoDeserializer<PlannerDecision> {
        public PlannerDecisions() {
            super(PlannerDecision.parser());
        }
    }
}
