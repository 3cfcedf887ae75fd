package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.KvTier;
import io.flotilla.worker.engine.KvTierStatus;
import io.flotilla.worker.kvbm.LowerTiers;

import java.util.ArrayList;
import java.util.List;

/** {@link KvTierStatus} of a {@link SimulatedEngine} with lower tiers; reads under the engine lock. */
final class SimTierStatus implements KvTierStatus {

    private final SimulatedEngine engine;

    SimTierStatus(SimulatedEngine engine) {
        this.engine = engine;
    }

    @Override
    public List<Tier> tiers() {
        return engine.withScheduler(s -> {
            LowerTiers t = s.tiers();
            List<Tier> out = new ArrayList<>(3);
            out.add(new Tier(KvTier.KV_TIER_DEVICE, s.pool().totalBlocks(), s.pool().residentBlocks(), 0, s.deviceStats()));
            out.add(new Tier(KvTier.KV_TIER_HOST, t.capacity(KvTier.KV_TIER_HOST), t.used(KvTier.KV_TIER_HOST),
                    t.settings().hostBytesPerSecond(), t.stats(KvTier.KV_TIER_HOST)));
            if (t.hasDisk()) {
                out.add(new Tier(KvTier.KV_TIER_DISK, t.capacity(KvTier.KV_TIER_DISK), t.used(KvTier.KV_TIER_DISK),
                        t.settings().diskBytesPerSecond(), t.stats(KvTier.KV_TIER_DISK)));
            }
            return out;
        });
    }

    @Override
    public void observeOnboarding(OnboardObserver observer) {
        engine.withScheduler(s -> {
            s.tiers().setOnboardObserver(observer::onboarded);
            return null;
        });
    }

    @Override
    public long bytesPerBlock() {
        LowerTiers t = engine.withScheduler(Scheduler::tiers);
        long modeled = t.settings().modeledBytesPerBlock();
        return modeled > 0 ? modeled : t.bytesPerBlock();
    }
}
