package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.VerbsLayouts.IBV_PORT_ATTR;

import java.lang.foreign.MemorySegment;

/**
 * What {@code ibv_query_port} says about a port: its state ({@code IBV_PORT_*}), MTUs ({@code IBV_MTU_*}),
 * LID (InfiniBand) and link layer ({@code IBV_LINK_LAYER_*}; Ethernet means RoCE, which needs a GID to
 * address the peer), which together decide the address vector of a queue pair's RTR transition.
 */
public record VerbsPortAttributes(int state, int maxMtu, int activeMtu, int gidTableLength, int portCapFlags,
    int maxMessageSize, int lid, int smLid, int activeWidth, int activeSpeed, int physicalState, int linkLayer) {

  public boolean active() {
    return state == VerbsConstants.IBV_PORT_ACTIVE;
  }

  public boolean ethernet() {
    return linkLayer == VerbsConstants.IBV_LINK_LAYER_ETHERNET;
  }

  /** Reads an {@link VerbsLayouts#IBV_PORT_ATTR}. */
  static VerbsPortAttributes read(MemorySegment s) {
    return new VerbsPortAttributes(i32(s, "state"), i32(s, "max_mtu"), i32(s, "active_mtu"), i32(s, "gid_tbl_len"),
        i32(s, "port_cap_flags"), i32(s, "max_msg_sz"), u16(s, "lid"), u16(s, "sm_lid"), u8(s, "active_width"),
        u8(s, "active_speed"), u8(s, "phys_state"), u8(s, "link_layer"));
  }

  private static int i32(MemorySegment s, String field) {
    return s.get(JAVA_INT, offset(IBV_PORT_ATTR, field));
  }

  private static int u16(MemorySegment s, String field) {
    return Short.toUnsignedInt(s.get(JAVA_SHORT, offset(IBV_PORT_ATTR, field)));
  }

  private static int u8(MemorySegment s, String field) {
    return Byte.toUnsignedInt(s.get(JAVA_BYTE, offset(IBV_PORT_ATTR, field)));
  }
}
