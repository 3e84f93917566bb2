package org.mori4j.transport.rdma;

import static org.mori4j.natives.verbs.VerbsConstants.IBV_MTU_4096;

import java.security.SecureRandom;
import java.util.List;
import org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtrAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtsAttributes;
import org.mori4j.transport.rdma.verbs.QueuePair;

/**
 * The queue-pair bring-up both providers go through, in one place: RESET -> INIT with the port and the remote
 * access this backend grants (local write, remote write, remote read), INIT -> RTR toward the peer's queue pair
 * (its QPN and start PSN, the smaller of the two path MTUs, the address vector: a global route by GID on
 * Ethernet/RoCE or when the peer has no LID, the LID otherwise), RTR -> RTS with our own start PSN and the retry
 * policy MORI and perftest use. On a NIC each step is one {@code ibv_modify_qp} with the attribute mask the IB
 * specification requires; the software provider checks the same transitions.
 */
final class QpBringUp {
  /** Outstanding RDMA READs a queue pair accepts as responder (and issues as requester). */
  static final int RD_ATOMIC = 16;
  /** RNR NAK timer code 12: 0.64 ms, the value perftest uses. */
  static final int MIN_RNR_TIMER = 12;

  private QpBringUp() {}

  static void init(QueuePair qp, RdmaDevice d) {
    qp.toInit(new InitAttributes(d.port.port(), 0, RdmaDevice.ACCESS));
  }

  /** Our side of a device pair: the path to {@code d} and a random 24-bit start PSN for each queue pair. */
  static RdmaHandshake.Endpoint endpoint(RdmaDevice d, List<QueuePair> qps, SecureRandom random) {
    int[] qpns = new int[qps.size()], psns = new int[qps.size()];
    for (int i = 0; i < qps.size(); i++) {
      qpns[i] = qps.get(i).qpNumber();
      psns[i] = random.nextInt(1 << 24);
    }
    return new RdmaHandshake.Endpoint(d.index, d.port.port(), d.port.lid(), d.gid.clone(), Math.min(d.port.activeMtu(), IBV_MTU_4096), qpns, psns);
  }

  /** INIT -> RTR -> RTS toward queue pair {@code i} of {@code remote}, sending from {@code ourPsn}. */
  static void connect(QueuePair qp, RdmaDevice d, RdmaHandshake.Endpoint remote, int i, int ourPsn) {
    int mtu = Math.min(Math.min(d.port.activeMtu(), remote.mtu()), IBV_MTU_4096);
    boolean global = d.port.ethernet() || remote.lid() == 0;
    qp.toReadyToReceive(new RtrAttributes(mtu, remote.qpNumbers()[i], remote.psns()[i], RD_ATOMIC, MIN_RNR_TIMER, d.port.port(),
        remote.lid(), 0, global ? remote.gid() : null, d.gidIndex, 64, 0, 0));
    qp.toReadyToSend(new RtsAttributes(ourPsn, 14, 7, 7, RD_ATOMIC));
  }
}
