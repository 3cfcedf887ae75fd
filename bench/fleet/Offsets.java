import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import java.util.*;

/** bench/fleet-scale.sh: prints the summed end offsets of the membership, load and KV event topics: "topic records". */
public class Offsets {
    public static void main(String[] a) {
        Properties p = new Properties();
        p.put("bootstrap.servers", a.length > 0 ? a[0] : "127.0.0.1:9092");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            for (String t : List.of("flotilla.workers", "flotilla.worker-load", "flotilla.kv-events")) {
                List<TopicPartition> parts = c.partitionsFor(t).stream().map(i -> new TopicPartition(t, i.partition())).toList();
                long sum = c.endOffsets(parts).values().stream().mapToLong(Long::longValue).sum();
                System.out.println(t + " " + sum);
            }
        }
    }
}
