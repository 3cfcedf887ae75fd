package io.flotilla.transfer;

/** Initiator-side validation of remote descriptors against the remote agent's metadata. */
final class RemoteDescs {

    private RemoteDescs() {
    }

    /**
     * Resolves each descriptor to (region id, offset, length) inside a region the metadata lists;
     * throws {@link ErrorCode#UNKNOWN_REGION} or {@link ErrorCode#OUT_OF_BOUNDS} for the first that is not.
     */
    static long[] resolve(AgentMetadata md, XferDescList descs) {
        long[] out = new long[3 * descs.size()];
        for (int i = 0; i < descs.size(); i++) {
            XferDescList.Desc d = descs.get(i);
            AgentMetadata.Region region = null;
            long offset = d.offset();
            if (d.region() == XferDescList.ADDRESS) {
                for (AgentMetadata.Region r : md.regions()) {
                    if (Long.compareUnsigned(d.offset(), r.base()) >= 0 && Long.compareUnsigned(d.offset() - r.base(), r.length()) < 0) {
                        region = r;
                        offset = d.offset() - r.base();
                    }
                }
                if (region == null) {
                    throw new TransferException(ErrorCode.OUT_OF_BOUNDS, "remote descriptor " + i + ": address 0x" + Long.toHexString(d.offset())
                            + " is not inside memory registered with '" + md.name() + "'");
                }
            } else {
                region = md.region(d.region());
                if (region == null) {
                    throw new TransferException(ErrorCode.UNKNOWN_REGION, "remote descriptor " + i + ": region " + d.region()
                            + " is not registered with '" + md.name() + "' (unknown or deregistered)");
                }
            }
            if (!region.contains(offset, d.length())) {
                throw new TransferException(ErrorCode.OUT_OF_BOUNDS, "remote descriptor " + i + ": [" + offset + ", +" + d.length()
                        + ") is outside region " + region.id() + " of '" + md.name() + "' (" + region.length() + " bytes)");
            }
            out[3 * i] = region.id();
            out[3 * i + 1] = offset;
            out[3 * i + 2] = d.length();
        }
        return out;
    }
}
