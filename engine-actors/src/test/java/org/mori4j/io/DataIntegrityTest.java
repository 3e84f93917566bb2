package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every byte of a read or write lands where it should, for sizes from 1 B to 64 MiB, at zero and odd
 * offsets, and nothing outside the transferred range changes on either side. One pair uses the default
 * TCP settings (stripes from 16 MiB over 2 connections); a second stripes everything from 4 KiB over 3
 * connections, so uneven stripes are checked too.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DataIntegrityTest {
  private static final long MiB = 1L << 20;
  private static final long SLACK = 64 * 1024;
  private static final long BIG = 64 * MiB + SLACK;
  private static final long STRIPED = 17 * MiB + SLACK;

  private EnginePair plain;
  private EnginePair striped;
  private final Arena arena = Arena.ofShared();
  /** Per pair: what its local and remote buffers should hold, kept in step with every transfer. */
  private final java.util.Map<EnginePair, MemorySegment[]> shadows = new java.util.IdentityHashMap<>();
  private boolean shadowsStale;
  private long seed = 100;

  @BeforeAll
  void start() {
    plain = new EnginePair(BIG);
    striped = new EnginePair(STRIPED, TcpBackendConfig.defaults().withConnectionsPerPeer(3).withStripeThreshold(4096));
    for (EnginePair p : List.of(plain, striped)) {
      randomize(p.localBuf, 1);
      randomize(p.remoteBuf, 2);
      shadows.put(p, new MemorySegment[] {arena.allocate(p.localBuf.byteSize(), 64), arena.allocate(p.remoteBuf.byteSize(), 64)});
    }
    shadowsStale = true;
  }

  private MemorySegment[] shadowsOf(EnginePair p) {
    if (shadowsStale) {
      for (var e : shadows.entrySet()) {
        e.getValue()[0].copyFrom(e.getKey().localBuf);
        e.getValue()[1].copyFrom(e.getKey().remoteBuf);
      }
      shadowsStale = false;
    }
    return shadows.get(p);
  }

  @AfterAll
  void stop() {
    if (plain != null) plain.close();
    if (striped != null) striped.close();
    arena.close();
  }

  static Stream<Arguments> cases() {
    long[] sizes = {1, 7, 4095, 4096, 4097, 65537, MiB + 3, 16 * MiB - 1, 16 * MiB, 16 * MiB + 1, 64 * MiB};
    long[][] offsets = {{0, 0}, {1, 4093}, {SLACK - 7, 3}};
    List<Arguments> out = new ArrayList<>();
    for (long size : sizes)
      for (long[] o : offsets)
        for (String op : new String[] {"write", "read"})
          for (String pair : new String[] {"plain", "striped"}) {
            if (pair.equals("striped") && size > 16 * MiB + 1) continue;
            out.add(Arguments.of(pair, op, size, o[0], o[1]));
          }
    return out.stream();
  }

  @ParameterizedTest(name = "{0} {1} of {2} bytes, local offset {3}, remote offset {4}")
  @MethodSource("cases")
  void transferMovesExactlyTheRequestedBytes(String pairName, String op, long size, long localOffset, long remoteOffset) {
    EnginePair p = pairName.equals("plain") ? plain : striped;
    boolean write = op.equals("write");
    MemorySegment src = write ? p.localBuf : p.remoteBuf;
    MemorySegment dst = write ? p.remoteBuf : p.localBuf;
    long srcOff = write ? localOffset : remoteOffset;
    long dstOff = write ? remoteOffset : localOffset;
    MemorySegment[] sh = shadowsOf(p);
    MemorySegment shadowSrc = write ? sh[0] : sh[1];
    MemorySegment shadowDst = write ? sh[1] : sh[0];
    shadowsStale = true; // until this test has checked everything
    // fresh source bytes, so a transfer that moves nothing cannot pass
    long sd = seed++;
    randomize(src, srcOff, size, sd);
    randomize(shadowSrc, srcOff, size, sd);
    if (size >= 8) assertNotEquals(-1, MemorySegment.mismatch(src, srcOff, srcOff + size, dst, dstOff, dstOff + size));

    long uid = p.initiator.allocateTransferUid();
    TransferStatus s = write ? p.initiator.write(p.local, localOffset, p.remote, remoteOffset, size, uid)
        : p.initiator.read(p.local, localOffset, p.remote, remoteOffset, size, uid);
    assertSucceeds(s, op + " of " + size);

    MemorySegment.copy(shadowSrc, srcOff, shadowDst, dstOff, size);
    assertSameBytes(shadowDst, dst, "destination after " + op);
    assertSameBytes(shadowSrc, src, "source after " + op);
    shadowsStale = false;
  }

  @Test
  void writeThenReadBackReturnsTheSameBytes() {
    shadowsStale = true; // changes buffers without the shadows
    EnginePair p = plain;
    long size = 3 * MiB + 11;
    randomize(p.localBuf, 0, size, 77);
    assertSucceeds(p.initiator.write(p.local, 0, p.remote, 5 * MiB, size, p.initiator.allocateTransferUid()));
    randomize(p.localBuf, 8 * MiB, size, 78); // overwrite the landing zone of the read
    assertSucceeds(p.initiator.read(p.local, 8 * MiB, p.remote, 5 * MiB, size, p.initiator.allocateTransferUid()));
    assertRangeEquals(p.localBuf, 0, p.localBuf, 8 * MiB, size, "read-back");
  }

  @Test
  void lastByteOfTheRegionIsReachableAndFirstByteToo() {
    shadowsStale = true; // changes buffers without the shadows
    EnginePair p = plain;
    long end = p.remote.size() - 1;
    p.localBuf.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 0x5a);
    assertSucceeds(p.initiator.write(p.local, 0, p.remote, end, 1, 1));
    assertEquals((byte) 0x5a, p.remoteBuf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, end));
    p.remoteBuf.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 0x3c);
    assertSucceeds(p.initiator.read(p.local, p.local.size() - 1, p.remote, 0, 1, 2));
    assertEquals((byte) 0x3c, p.localBuf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, p.local.size() - 1));
  }

  @Test
  void manyTransfersInFlightAtOnceAllLandIntact() {
    shadowsStale = true; // changes buffers without the shadows
    EnginePair p = striped;
    int n = 256;
    long block = 40_000;
    randomize(p.localBuf, 0, n * block, 99);
    List<TransferStatus> all = new ArrayList<>();
    for (int i = 0; i < n; i++)
      all.add(p.initiator.write(p.local, i * block, p.remote, (n - 1 - i) * block, block, p.initiator.allocateTransferUid()));
    assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(all, Duration.ofSeconds(60)));
    for (int i = 0; i < n; i++) assertRangeEquals(p.localBuf, i * block, p.remoteBuf, (n - 1 - i) * block, block, "block " + i);
  }

  @Test
  void writeThroughTheActorMessageApiMovesTheBytes() throws Exception {
    shadowsStale = true; // changes buffers without the shadows
    EnginePair p = plain;
    long size = 100_000;
    randomize(p.localBuf, 0, size, 55);
    TransferStatus s = AskPattern.<IoEngineProtocol.Command, TransferStatus>ask(p.initiator.actorRef(),
            r -> new IoEngineProtocol.Write(p.local, 0, p.remote, 12345, size, 4242, r), Duration.ofSeconds(30),
            p.initiator.actorSystem().scheduler())
        .toCompletableFuture().get(30, TimeUnit.SECONDS);
    assertTrue(s.succeeded(), s.toString());
    assertRangeEquals(p.localBuf, 0, p.remoteBuf, 12345, size, "actor-API write");
    randomize(p.localBuf, 0, size, 56);
    TransferStatus r = AskPattern.<IoEngineProtocol.Command, TransferStatus>ask(p.initiator.actorRef(),
            ref -> new IoEngineProtocol.Read(p.local, 0, p.remote, 12345, size, 4243, ref), Duration.ofSeconds(30),
            p.initiator.actorSystem().scheduler())
        .toCompletableFuture().get(30, TimeUnit.SECONDS);
    assertTrue(r.succeeded(), r.toString());
    assertRangeEquals(p.localBuf, 0, p.remoteBuf, 12345, size, "actor-API read");
  }

  @Test
  void completionStageCompletesWithTheStatus() throws Exception {
    shadowsStale = true; // changes buffers without the shadows
    EnginePair p = plain;
    TransferStatus s = p.initiator.write(p.local, 0, p.remote, 0, 4096, 9);
    TransferStatus done = s.completion().toCompletableFuture().get(30, TimeUnit.SECONDS);
    assertSame(s, done);
    assertTrue(done.succeeded());
  }
}
