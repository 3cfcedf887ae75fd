package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.RequestRecord;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class RequestRecordPublisherTest {

    /** A sink that blocks on its first record until released, like a producer waiting for a dead broker. */
    private static final class StuckSink implements RequestRecordSink {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final List<String> sent = new CopyOnWriteArrayList<>();

        @Override
        public void send(RequestRecord record, Runnable onError) {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            sent.add(record.getId());
        }
    }

    private static RequestRecord record(String id) {
        return RequestRecord.newBuilder().setId(id).build();
    }

    @Test
    void aStuckSinkNeverBlocksPublishersAndOverflowIsDroppedAndCounted() throws InterruptedException {
        StuckSink sink = new StuckSink();
        RequestRecordPublisher publisher = new RequestRecordPublisher(sink, 3);
        try {
            publisher.publish(record("r0"));
            assertThat(sink.entered.await(30, TimeUnit.SECONDS)).isTrue(); // the sender holds r0 in the stuck sink

            for (int i = 1; i <= 8; i++) {
                publisher.publish(record("r" + i)); // returns at once although the sink does not move
            }
            assertThat(publisher.dropped()).isEqualTo(5);

            sink.release.countDown();
            await().atMost(java.time.Duration.ofSeconds(30)).until(() -> sink.sent.size() == 4);
            assertThat(sink.sent).containsExactly("r0", "r1", "r2", "r3");
        } finally {
            sink.release.countDown();
            publisher.close();
        }
    }

    @Test
    void sinkFailuresAreCounted() {
        RequestRecordPublisher publisher = new RequestRecordPublisher((record, onError) -> onError.run(), 10);
        try {
            publisher.publish(record("a"));
            publisher.publish(record("b"));
            await().atMost(java.time.Duration.ofSeconds(30)).until(() -> publisher.failed() == 2);
        } finally {
            publisher.close();
        }
    }
}
