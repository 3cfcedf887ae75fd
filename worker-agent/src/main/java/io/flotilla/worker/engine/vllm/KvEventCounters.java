package io.flotilla.worker.engine.vllm;

import java.util.concurrent.atomic.LongAdder;

/**
 * What could not be translated or had to be repaired, per worker. Untranslatable blocks are left
 * out of the Flotilla view (a cache miss for the router, never a wrong claim); each counter names
 * why. Thread-safe; read by metrics, written by the event thread.
 */
public final class KvEventCounters {

    final LongAdder batches = new LongAdder();
    final LongAdder undecodable = new LongAdder();
    final LongAdder unknownEventTypes = new LongAdder();
    final LongAdder unknownParent = new LongAdder();
    final LongAdder missingTokens = new LongAdder();
    final LongAdder blockSizeMismatch = new LongAdder();
    final LongAdder loraBlocks = new LongAdder();
    final LongAdder unscopedBlocks = new LongAdder();
    final LongAdder opaqueKeyBlocks = new LongAdder();
    final LongAdder unknownRemoved = new LongAdder();
    final LongAdder hashConflicts = new LongAdder();
    final LongAdder gapsRepaired = new LongAdder();
    final LongAdder gapsUnrepaired = new LongAdder();
    final LongAdder engineRestarts = new LongAdder();

    /** Engine batches received (live or replayed) and decoded. */
    public long batches() {
        return batches.sum();
    }

    /** Payloads that were not a KV event batch in any known form. */
    public long undecodable() {
        return undecodable.sum();
    }

    /** Events of a type this agent does not know (skipped). */
    public long unknownEventTypes() {
        return unknownEventTypes.sum();
    }

    /** Stored blocks skipped because their parent's engine hash was never seen (no chain to hash from). */
    public long unknownParent() {
        return unknownParent.sum();
    }

    /** Stored blocks skipped because the event did not carry exactly block_size token ids per block. */
    public long missingTokens() {
        return missingTokens.sum();
    }

    /** Stored blocks skipped because the engine's block size is not the one Flotilla hashes with. */
    public long blockSizeMismatch() {
        return blockSizeMismatch.sum();
    }

    /** Stored blocks skipped because they belong to a LoRA adapter whose name is not on the wire (older vLLM). */
    public long loraBlocks() {
        return loraBlocks.sum();
    }

    /**
     * Stored root blocks skipped because the event does not tell their cache scope: no {@code extra_keys}
     * while tenant-salted requests were sent, more than one candidate salt, or an adapter other than their parent's.
     */
    public long unscopedBlocks() {
        return unscopedBlocks.sum();
    }

    /** Stored blocks skipped because vLLM hashed them with non-string extra keys (multimodal ids, prompt embeddings). */
    public long opaqueKeyBlocks() {
        return opaqueKeyBlocks.sum();
    }

    /** Removed block hashes that were not resident in the translated view. */
    public long unknownRemoved() {
        return unknownRemoved.sum();
    }

    /** Stored blocks skipped because their engine hash already stands for other tokens. */
    public long hashConflicts() {
        return hashConflicts.sum();
    }

    /** Sequence gaps filled from the engine's replay socket. */
    public long gapsRepaired() {
        return gapsRepaired.sum();
    }

    /** Sequence gaps the replay socket could not fill; each forced a resync (AllBlocksCleared). */
    public long gapsUnrepaired() {
        return gapsUnrepaired.sum();
    }

    /** Engine restarts detected (sequence went back, or the engine process changed). */
    public long engineRestarts() {
        return engineRestarts.sum();
    }

    /** Every block skipped for any reason. */
    public long untranslatable() {
        return unknownParent() + missingTokens() + blockSizeMismatch() + loraBlocks() + hashConflicts() + unscopedBlocks()
                + opaqueKeyBlocks();
    }

    @Override
    public String toString() {
        return "KvEventCounters[batches=" + batches() + ", undecodable=" + undecodable() + ", unknownTypes="
                + unknownEventTypes() + ", unknownParent=" + unknownParent() + ", missingTokens=" + missingTokens()
                + ", blockSizeMismatch=" + blockSizeMismatch() + ", lora=" + loraBlocks() + ", unscoped=" + unscopedBlocks()
                + ", opaqueKeys=" + opaqueKeyBlocks() + ", unknownRemoved="
                + unknownRemoved() + ", hashConflicts=" + hashConflicts() + ", gapsRepaired=" + gapsRepaired() + ", gapsUnrepaired=" + gapsUnrepaired()
                + ", engineRestarts=" + engineRestarts() + "]";
    }
}
