package org.mori4j.transport.rdma.verbs;

import static org.mori4j.natives.verbs.VerbsConstants.IBV_LINK_LAYER_ETHERNET;
import static org.mori4j.natives.verbs.VerbsConstants.IBV_PORT_ACTIVE;

/**
 * What {@code ibv_query_port} says of one port, the part the RDMA backend needs: its state, the active path MTU
 * ({@code IBV_MTU_*}), its LID (InfiniBand) and link layer (Ethernet ports, RoCE, are addressed by GID only).
 */
public record PortInfo(int port, int state, int activeMtu, int lid, int linkLayer, int gidTableLength) {
  public boolean active() {
    return state == IBV_PORT_ACTIVE;
  }

  public boolean ethernet() {
    return linkLayer == IBV_LINK_LAYER_ETHERNET;
  }
}
