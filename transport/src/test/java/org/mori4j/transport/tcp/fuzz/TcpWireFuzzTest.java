package org.mori4j.transport.tcp.fuzz;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.transport.tcp.fuzz.FuzzTarget.*;
import static org.mori4j.transport.tcp.fuzz.RawClient.*;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The TCP data port against peers that do not follow the protocol: random bytes, every hello field at its
 * limits, truncated and oversized frames, and requests from an authenticated peer for ids, keys, addresses
 * and bounds it does not own. Each case runs against a live target ({@link FuzzTarget}) that must answer or
 * close every bad connection, keep serving a well-behaved peer throughout, leave every byte outside the
 * writable registrations unchanged, return to its baseline of sockets and direct memory, and log each reason
 * it closed connections for once. Seeds are fixed (override with {@code -Dmori4j.fuzz.seed=N}) and printed in
 * every failure. Idle connections and stalled peers: {@link TcpIdleAndStallFuzzTest}.
 */
class TcpWireFuzzTest {
  static final long SEED = Long.getLong("mori4j.fuzz.seed", 0x4d344a51L);

  private FuzzTarget t;

  @BeforeEach
  void start(TestInfo info) throws Exception {
    t = new FuzzTarget(SEED ^ info.getDisplayName().hashCode());
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (t != null) t.close();
  }

  private static byte[] random(SplittableRandom rnd, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) b[i] = (byte) rnd.nextInt(256);
    return b;
  }

  @Test
  void randomBytesBeforeAndAfterTheHelloCloseTheConnection() throws Exception {
    SplittableRandom rnd = new SplittableRandom(t.seed);
    long token = t.token(FUZZER);
    for (int i = 0; i < 120; i++) {
      if (i == 60) t.awaitGoodRounds(1, 10_000); // served during the attack
      boolean authenticated = i % 2 == 1;
      // shorter than a header, the target sees the stream end inside it; longer, the magic is wrong
      int n = i % 3 == 0 ? 1 + rnd.nextInt(REQ_HEADER + ENTRY - 1) : REQ_HEADER + ENTRY + rnd.nextInt(8192);
      try (RawClient c = authenticated ? t.authenticated(token) : new RawClient(t.address(), 2000)) {
        c.send(random(rnd, n));
        c.shutdownOutput();
        assertTrue(c.closedWithin(3000), "connection " + i + " (" + n + " random bytes) was not closed (seed " + t.seed + ")");
      }
    }
    t.assertHealthy("random bytes", "malformed frame", "closed mid-request");
  }

  /** Every field of a hello set to values at and past its limits: answered with a refusal, or closed. */
  @Test
  void helloFieldsAtTheirLimitsAreRefused() throws Exception {
    long[] extremes = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, Integer.MAX_VALUE, Integer.MIN_VALUE, 0xffffffffL, 4096, 4097, 64, 65};
    byte[] key = FUZZER.getBytes();
    int cases = 0;
    for (int field = 0; field < 14; field++) {
      if (field == 7) t.awaitGoodRounds(1, 10_000);
      for (long v : extremes) {
        long[] f = {REQ_MAGIC, VERSION, T_HELLO, 0, 1, 1, 0, 42, 0, 0, 0, key.length, 0, key.length};
        f[field] = v;
        ByteBuffer frame = request((int) f[0], (int) f[1], (int) f[2], (int) f[3], (int) f[4], (int) f[5], f[6], f[7], f[8],
            f[9], f[10], f[11], new long[] {f[12]}, new long[] {f[13]}, key);
        try (RawClient c = new RawClient(t.address(), 3000)) {
          c.send(frame);
          c.shutdownOutput();
          Response r = c.response();
          if (r != null) {
            assertEquals(T_HELLO_OK, r.type(), "field " + field + " = " + v);
            assertNotEquals(0, r.status(), "a hello without a handshake was accepted: field " + field + " = " + v);
          }
          assertTrue(c.closedWithin(3000), "hello with field " + field + " = " + v + " left open (seed " + t.seed + ")");
        }
        cases++;
      }
    }
    System.out.printf("hello fields at their limits: %d connections, each refused or closed%n", cases);
    t.assertHealthy("hello fields at their limits", "malformed frame", "refused hello", "request before hello",
        "closed mid-request");
  }

  @Test
  void truncatedAndOversizedFramesCloseTheConnection() throws Exception {
    long token = t.token(FUZZER);
    long oBase = t.open.address(), oKey = t.open.accessKey();
    List<ByteBuffer> truncated = new ArrayList<>();
    ByteBuffer read = request(T_READ, 0, 1, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null);
    for (int cut : new int[] {1, 7, 8, 31, 63, 64, 65, 79}) truncated.add(read.duplicate().limit(cut));
    ByteBuffer batch = request(T_READ, 0, 2, OPEN_ID, oKey, oBase, 4 * 4096, new long[] {0, 4096, 8192, 12288},
        new long[] {4096, 4096, 4096, 4096}, null);
    truncated.add(batch.duplicate().limit(REQ_HEADER + ENTRY + ENTRY / 2)); // inside the block list
    // a WRITE cut inside its payload, accepted (bytes land in open) and refused (payload being drained)
    truncated.add(request(T_WRITE, 0, 3, OPEN_ID, oKey, oBase, 65536, new long[] {0}, new long[] {65536}, new byte[1000]));
    truncated.add(request(T_WRITE, 0, 4, SEALED_ID, oKey, oBase, 65536, new long[] {0}, new long[] {65536}, new byte[1000]));
    for (ByteBuffer frame : truncated) {
      try (RawClient c = t.authenticated(token)) {
        c.send(frame);
        c.shutdownOutput();
        while (true) { // a refused write's answer may come before the stream ends
          Response r = c.response();
          if (r == null) break;
          assertNotEquals(0, r.status(), "a truncated request was answered as done (seed " + t.seed + ")");
        }
      }
    }
    t.awaitGoodRounds(1, 10_000);
    List<ByteBuffer> oversized = List.of(
        request(REQ_MAGIC, VERSION, T_READ, 0, 1025, 1, 5, 0, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null),
        request(REQ_MAGIC, VERSION, T_READ, 0, Integer.MAX_VALUE, 1, 5, 0, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null),
        request(REQ_MAGIC, VERSION, T_READ, 0, 0, 1, 5, 0, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null),
        request(REQ_MAGIC, VERSION, T_READ, 0, -1, 1, 5, 0, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null),
        request(T_WRITE, 0, 6, OPEN_ID, oKey, oBase, -1, new long[] {0}, new long[] {4096}, null),
        request(T_READ, 0, 6, OPEN_ID, oKey, oBase, 0, new long[] {0}, new long[] {4096}, null),
        request(T_READ, F_PART, 6, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null),
        request(REQ_MAGIC, VERSION, 0, 0, 1, 1, 6, 0, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null),
        request(REQ_MAGIC, VERSION, 4, 0, 1, 1, 6, 0, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null),
        request(REQ_MAGIC, VERSION, 0xff, 0, 1, 1, 6, 0, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null),
        request(REQ_MAGIC, VERSION, T_HELLO_OK, 0, 1, 1, 6, 0, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null),
        hello(FUZZER, token), // a second hello
        request(REQ_MAGIC, 2, T_READ, 0, 1, 1, 6, 0, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null),
        request(RESP_MAGIC, VERSION, T_READ, 0, 1, 1, 6, 0, OPEN_ID, oKey, oBase, 4096, new long[] {0}, new long[] {4096}, null));
    for (int i = 0; i < oversized.size(); i++) {
      try (RawClient c = t.authenticated(token)) {
        c.send(oversized.get(i));
        Response r = c.response();
        assertNull(r, "frame " + i + " was answered (status " + (r == null ? 0 : r.status()) + ") instead of closing the connection");
        assertTrue(c.closedWithin(3000), "frame " + i + " left the connection open (seed " + t.seed + ")");
      }
    }
    // absurd but well-formed sizes are refusals, and the connection goes on
    try (RawClient c = t.authenticated(token)) {
      c.send(request(T_READ, 0, 7, OPEN_ID, oKey, oBase, 1L << 40, new long[] {0}, new long[] {1L << 40}, null));
      Response r = c.response();
      assertEquals(T_READ_DATA, r.type());
      assertNotEquals(0, r.status(), "a 1 TiB read of a 4 MiB region");
      c.send(request(T_READ, 0, 8, OPEN_ID, oKey, oBase, 16, new long[] {OPEN_SIZE - 16}, new long[] {16}, null));
      Response ok = c.response();
      assertEquals(0, ok.status(), ok.text());
      assertArrayEquals(t.open.segment().asSlice(OPEN_SIZE - 16, 16).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), ok.payload());
    }
    t.assertHealthy("truncated and oversized frames", "malformed frame", "closed mid-request");
  }

  /**
   * Wrong, foreign, replayed and revoked tokens. A token is per engine key and handshake: an engine's new
   * incarnation (or a reconnection) handshakes again and gets a new one, which ends the old one's connections.
   */
  @Test
  void helloTokensOtherThanTheCurrentOneAreRefused() throws Exception {
    long token = t.token(FUZZER);
    long other = t.token("other-engine");
    assertRefused(FUZZER, token + 1, "a wrong token");
    assertRefused(FUZZER, other, "another engine's token");
    assertRefused("other-engine", token, "this engine's token under another key");
    // the same token opens every lane of the initiator: replaying it is accepted, over many connections
    List<RawClient> lanes = new ArrayList<>();
    try {
      for (int i = 0; i < 16; i++) lanes.add(t.authenticated(token));
      for (RawClient c : lanes) {
        c.send(request(T_READ, 0, 1, OPEN_ID, t.open.accessKey(), t.open.address(), 8, new long[] {8}, new long[] {8}, null));
        assertEquals(0, c.response().status());
      }
      t.awaitGoodRounds(1, 10_000);
    } finally {
      lanes.forEach(RawClient::close);
    }
    // a connection of the old incarnation, authenticated before its engine handshook again
    RawClient old = t.authenticated(token);
    long renewed = t.token(FUZZER); // a new handshake (a new incarnation, or a reconnection) replaces the token
    assertRefused(FUZZER, token, "the token of an earlier handshake");
    byte[] before = t.open.segment().asSlice(0, 4096).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    old.send(request(T_WRITE, 0, 9, OPEN_ID, t.open.accessKey(), t.open.address(), 4096, new long[] {0}, new long[] {4096},
        new byte[4096]));
    assertNull(old.response(), "a connection of the earlier handshake was still served (seed " + t.seed + ")");
    assertTrue(old.closedWithin(3000), "the earlier handshake's connection stayed open");
    old.close();
    assertArrayEquals(before, t.open.segment().asSlice(0, 4096).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
        "a write on a revoked token moved bytes");
    RawClient idle = t.authenticated(renewed); // idle, then its engine is disconnected: closed without a request
    t.authenticated(renewed).close();
    t.target.disconnect(FUZZER, org.mori4j.transport.TransportError.PEER_LOST, "fuzz: forget the fuzzer");
    assertTrue(idle.closedWithin(3000), "an idle connection of a disconnected engine stayed open");
    idle.close();
    assertRefused(FUZZER, renewed, "a token of an engine the target disconnected");
    t.assertHealthy("tokens", "refused hello", "token revoked");
  }

  private void assertRefused(String key, long token, String what) throws Exception {
    try (RawClient c = new RawClient(t.address(), 3000)) {
      Response r = c.presentHello(key, token);
      assertNotNull(r, what + ": closed without the reason");
      assertNotEquals(0, r.status(), what + " was accepted (seed " + t.seed + ")");
      assertTrue(r.text().contains("no handshake on record"), r.text());
      assertTrue(c.closedWithin(3000), what + ": the connection stayed open");
    }
  }
}
