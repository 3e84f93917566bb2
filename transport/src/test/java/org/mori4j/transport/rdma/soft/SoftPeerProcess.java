package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;
import org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtsAttributes;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.ProtectionDomain;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.QueuePairSpec;
import org.mori4j.transport.rdma.verbs.VerbsDevice;

/**
 * The far end of {@link SoftVerbsTwoProcessTest}, run in its own JVM: opens a software device, registers a region
 * whose first half holds a known pattern, prints what a peer needs ({@code READY gid qpn address rkey}), connects
 * its queue pair when told ({@code CONNECT gid qpn psn}), then checks on {@code CHECK seed} that the second half
 * holds the pattern of {@code seed} ({@code OK} or {@code BAD offset}) and closes everything on {@code EXIT}.
 */
public final class SoftPeerProcess {
  static final int HALF = 1 << 20;

  private SoftPeerProcess() {}

  public static void main(String[] args) throws Exception {
    long seed = Long.parseLong(args[0]);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    SoftwareVerbsProvider provider = new SoftwareVerbsProvider();
    try (Arena arena = Arena.ofShared(); VerbsDevice d = provider.open("soft0"); ProtectionDomain pd = d.allocateProtectionDomain();
         CompletionQueue cq = d.createCompletionQueue(16, null)) {
      MemorySegment m = arena.allocate(2L * HALF, 64);
      SoftFixture.fill(m.asSlice(0, HALF), seed);
      try (MemoryRegion mr = pd.registerMemory(m, SoftFixture.ALL); QueuePair qp = pd.createQueuePair(new QueuePairSpec(cq, cq, 8, 8))) {
        qp.toInit(new InitAttributes(1, 0, SoftFixture.ALL));
        System.out.println("READY " + HexFormat.of().formatHex(d.queryGid(1, 0)) + " " + qp.qpNumber() + " " + mr.address() + " " + mr.rkey());
        String[] c = in.readLine().split(" ");
        qp.toReadyToReceive(SoftFixture.rtr(Integer.parseInt(c[2]), HexFormat.of().parseHex(c[1]), Integer.parseInt(c[3])));
        qp.toReadyToSend(RtsAttributes.defaults(7));
        System.out.println("RTS");
        String[] check = in.readLine().split(" ");
        MemorySegment expected = arena.allocate(HALF);
        SoftFixture.fill(expected, Long.parseLong(check[1]));
        long at = expected.mismatch(m.asSlice(HALF, HALF));
        System.out.println(at == -1 ? "OK" : "BAD " + at);
        in.readLine();
      }
    }
  }
}
