package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.VerbsLayouts.IBV_DEVICE_ATTR;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

/**
 * What {@code ibv_query_device} says about a device, the fields a transport sizes its queues and
 * registrations by. GUIDs are shown in the byte order the wire uses (they are {@code __be64} in C).
 */
public record VerbsDeviceAttributes(String firmwareVersion, long nodeGuid, long systemImageGuid, long maxMrSize,
    int vendorId, int vendorPartId, int hardwareVersion, int maxQp, int maxQpWr, int maxSge, int maxCq,
    int maxCqe, int maxMr, int maxPd, int maxQpRdAtom, int maxQpInitRdAtom, int maxPkeys, int physicalPortCount) {

  /** Reads an {@link VerbsLayouts#IBV_DEVICE_ATTR}. */
  static VerbsDeviceAttributes read(MemorySegment s) {
    return new VerbsDeviceAttributes(
        s.asSlice(offset(IBV_DEVICE_ATTR, "fw_ver"), 64).getString(0),
        s.get(JAVA_LONG.withOrder(ByteOrder.BIG_ENDIAN), offset(IBV_DEVICE_ATTR, "node_guid")),
        s.get(JAVA_LONG.withOrder(ByteOrder.BIG_ENDIAN), offset(IBV_DEVICE_ATTR, "sys_image_guid")),
        s.get(JAVA_LONG, offset(IBV_DEVICE_ATTR, "max_mr_size")),
        i32(s, "vendor_id"), i32(s, "vendor_part_id"), i32(s, "hw_ver"), i32(s, "max_qp"), i32(s, "max_qp_wr"),
        i32(s, "max_sge"), i32(s, "max_cq"), i32(s, "max_cqe"), i32(s, "max_mr"), i32(s, "max_pd"),
        i32(s, "max_qp_rd_atom"), i32(s, "max_qp_init_rd_atom"),
        Short.toUnsignedInt(s.get(JAVA_SHORT, offset(IBV_DEVICE_ATTR, "max_pkeys"))),
        Byte.toUnsignedInt(s.get(JAVA_BYTE, offset(IBV_DEVICE_ATTR, "phys_port_cnt"))));
  }

  private static int i32(MemorySegment s, String field) {
    return s.get(JAVA_INT, offset(IBV_DEVICE_ATTR, field));
  }
}
