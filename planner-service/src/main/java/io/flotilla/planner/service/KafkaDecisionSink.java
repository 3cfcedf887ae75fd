package io.flotilla.planner.service;

import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.PlannerDecision;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Publishes decisions to {@code flotilla.planner-decisions}, keyed by model (compacted: the latest per model survives). */
public final class KafkaDecisionSink implements DecisionSink {

    private static final Logger log = LoggerFactory.getLogger(KafkaDecisionSink.class);

    private final Producer<String, Object> producer;

    public KafkaDecisionSink(Producer<String, Object> producer) {
        this.producer = producer;
    }

    @Override
    public void publish(PlannerDecision d) {
        try {
            producer.send(new ProducerRecord<>(Topics.PLANNER_DECISIONS.name(), d.getModel(), d), (meta, e) -> {
                if (e != null) {
                    log.warn("decision for {} not published: {}", d.getModel(), e.toString());
                }
            });
        } catch (RuntimeException e) {
            log.warn("decision for {} not published: {}", d.getModel(), e.toString());
        }
    }
}
