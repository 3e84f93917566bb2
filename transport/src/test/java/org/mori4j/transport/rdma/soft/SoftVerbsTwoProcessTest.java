package org.mori4j.transport.rdma.soft;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.natives.verbs.VerbsConstants.*;
import static org.mori4j.transport.rdma.soft.SoftFixture.*;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtsAttributes;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.SendRequests;

/**
 * Devices in two JVMs reach each other with nothing but what a verbs application exchanges out of band (GID, QP
 * number, PSN, address and rkey): this JVM READs a pattern out of a {@link SoftPeerProcess}'s memory and WRITEs
 * another one into it, which the peer checks in its own process.
 */
class SoftVerbsTwoProcessTest {
  @Test
  void writeAndReadAcrossProcesses() throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process peer = new ProcessBuilder(java.toString(), "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
        SoftPeerProcess.class.getName(), "41").redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try (SoftFixture f = new SoftFixture();
         BufferedReader from = new BufferedReader(new InputStreamReader(peer.getInputStream()));
         PrintWriter to = new PrintWriter(peer.getOutputStream(), true)) {
      String[] ready = readLine(from, "READY").split(" ");
      byte[] gid = HexFormat.of().parseHex(ready[1]);
      int qpn = Integer.parseInt(ready[2]);
      long address = Long.parseLong(ready[3]);
      int rkey = Integer.parseInt(ready[4]);
      QueuePair qp = f.queuePair(f.pdA, f.cqA, 8, 8);
      qp.toInit(new InitAttributes(1, 0, ALL));
      qp.toReadyToReceive(rtr(qpn, gid, 7)); // the peer sends from PSN 7
      qp.toReadyToSend(new RtsAttributes(3, 14, 7, 7, 16));
      to.println("CONNECT " + HexFormat.of().formatHex(f.a.queryGid(1, 0)) + " " + qp.qpNumber() + " 3");
      readLine(from, "RTS");
      int half = SoftPeerProcess.HALF;
      MemorySegment got = f.memory(half), mine = f.memory(half), expected = f.memory(half);
      fill(expected, 41);
      fill(mine, 42);
      MemoryRegion mg = f.register(f.pdA, got, ALL), mm = f.register(f.pdA, mine, ALL);
      qp.postSend(new SendRequests(2).read(0, 1, mg.address(), half, mg.lkey(), address, rkey, IBV_SEND_SIGNALED)
          .write(1, 2, mm.address(), half, mm.lkey(), address + half, rkey, IBV_SEND_SIGNALED), 0, 2);
      for (Wc w : poll(f.cqA, 2)) assertEquals(IBV_WC_SUCCESS, w.status(), w.toString());
      assertSameBytes(expected, got);
      to.println("CHECK 42");
      assertEquals("OK", readLine(from, "OK", "BAD "));
      to.println("EXIT");
      assertTrue(peer.waitFor(20, TimeUnit.SECONDS), "the peer exits");
      assertEquals(0, peer.exitValue());
    } finally {
      peer.destroyForcibly();
    }
  }

  /** The peer's next line that starts with one of {@code prefixes}; its log lines share stdout and are skipped. */
  private static String readLine(BufferedReader from, String... prefixes) throws Exception {
    while (true) {
      String line = from.readLine();
      assertNotNull(line, "the peer process ended before saying " + String.join(" or ", prefixes));
      for (String p : prefixes) if (line.startsWith(p)) return line;
    }
  }
}
