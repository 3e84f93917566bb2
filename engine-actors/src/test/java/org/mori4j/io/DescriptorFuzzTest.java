package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * EngineDesc/MemoryDesc decoding of hostile bytes: random input, truncations of valid encodings at every
 * length, single-byte and 4-byte overwrites, huge length fields, trailing garbage. The only acceptable
 * outcomes are IllegalArgumentException or a valid descriptor that round-trips; never another exception,
 * an OutOfMemoryError or a hang.
 */
class DescriptorFuzzTest {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  static List<EngineDesc> engineSamples() {
    String path = "pekko://mori4j@127.0.0.1:25520/user";
    return List.of(
        new EngineDesc("a", "", "127.0.0.1", 0, 0, "", Set.of()),
        new EngineDesc("engine-1", "node-a", "127.0.0.1", 25520, 12345, path, Set.of(BackendType.TCP)),
        new EngineDesc("ключ-é-\uD83D\uDE00", "nœud", "::1", 65535, -1, path + "/x", EnumSet.allOf(BackendType.class)),
        new EngineDesc("k".repeat(255), "n".repeat(300), "h".repeat(253), 1, Long.MAX_VALUE, "p".repeat(4096),
            EnumSet.of(BackendType.RDMA, BackendType.XGMI)),
        new EngineDesc("engine-x", "node-a", "127.0.0.1", 25520, 12345, path, EnumSet.of(BackendType.XGMI, BackendType.TCP),
            Map.of(BackendType.XGMI, org.mori4j.transport.xgmi.XgmiHost.local().encode())),
        new EngineDesc("engine-y", "node-b", "::1", 1, 2, path, EnumSet.allOf(BackendType.class),
            Map.of(BackendType.XGMI, new byte[] {1}, BackendType.RDMA, new byte[0], BackendType.TCP, "t".getBytes())),
        new EngineDesc("engine-i", "node-c", "127.0.0.1", 25521, 77, path, Set.of(BackendType.TCP), null, 0x1234_5678_9abc_def1L),
        new EngineDesc("engine-j", "node-c", "127.0.0.1", 25522, 78, path, EnumSet.of(BackendType.XGMI, BackendType.TCP),
            Map.of(BackendType.XGMI, new byte[] {7, 7}), -2));
  }

  @Test
  void engineDescriptorsCarryBackendDataAndStayReadableByVersionOneReaders() {
    EngineDesc plain = engineSamples().get(1);
    byte[] v1 = plain.toBytes();
    assertEquals(1, ByteBuffer.wrap(v1).getShort(4), "without backend data the descriptor keeps version 1");
    EngineDesc withData = engineSamples().get(4);
    byte[] v2 = withData.toBytes();
    assertEquals(2, ByteBuffer.wrap(v2).getShort(4));
    EngineDesc back = EngineDesc.fromBytes(v2);
    assertEquals(withData, back);
    assertArrayEquals(org.mori4j.transport.xgmi.XgmiHost.local().encode(), back.backendData(BackendType.XGMI));
    assertNotEquals(plain, new EngineDesc(plain.key(), plain.nodeId(), plain.host(), plain.port(), plain.pid(), plain.controlPath(),
        plain.backends(), Map.of(BackendType.TCP, new byte[] {1})), "backend data is part of the identity");
    // an entry count of 0, a duplicate backend and an unknown backend are refused
    int countAt = v2.length - (1 + 1 + 4 + withData.backendData(BackendType.XGMI).length);
    for (int[] poke : new int[][] {{countAt, 0}, {countAt, 4}, {countAt + 1, 9}}) {
      byte[] c = v2.clone();
      c[poke[0]] = (byte) poke[1];
      assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(c), "byte " + poke[0] + " = " + poke[1]);
    }
    byte[] v4 = v2.clone();
    ByteBuffer.wrap(v4).putShort(4, (short) 4);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(v4));
    assertTrue(e.getMessage().contains("1..3"), e.getMessage());
  }

  static List<MemoryDesc> memorySamples() {
    Map<BackendType, byte[]> one = new EnumMap<>(BackendType.class);
    one.put(BackendType.RDMA, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
    Map<BackendType, byte[]> all = new EnumMap<>(BackendType.class);
    all.put(BackendType.XGMI, new byte[64]);
    all.put(BackendType.RDMA, new byte[0]);
    all.put(BackendType.TCP, "tcp".getBytes());
    Map<BackendType, byte[]> big = new EnumMap<>(BackendType.class);
    byte[] blob = new byte[64 * 1024];
    new SplittableRandom(1).nextBytes(blob);
    big.put(BackendType.RDMA, blob);
    return List.of(
        new MemoryDesc("e", 1, -1, 0x7f00_0000_1000L, 4096, MemoryLocationType.CPU, 0x1234_5678_9abc_def0L, null),
        new MemoryDesc("", -5, 0, 0, 1, MemoryLocationType.GPU, 0, one),
        new MemoryDesc("engine-ζ", Long.MAX_VALUE, 7, -1, Long.MAX_VALUE, MemoryLocationType.CPU, -1, all),
        new MemoryDesc("x".repeat(255), 3, 1, 4096, 1L << 40, MemoryLocationType.GPU, 42, big),
        new MemoryDesc("engine-i", 9, -1, 0x7f00_0000_2000L, 8192, MemoryLocationType.CPU, 5, one, 0x1234_5678_9abc_def1L),
        new MemoryDesc("engine-j", 10, 0, 0x7f00_0000_3000L, 4096, MemoryLocationType.GPU, -5, null, Long.MIN_VALUE));
  }

  /** Decodes {@code b}: IllegalArgumentException or a descriptor that survives another round trip. */
  private static <T> int tryDecode(byte[] b, Function<byte[], T> decode, Function<T, byte[]> encode, String what) {
    T d;
    try {
      d = decode.apply(b);
    } catch (IllegalArgumentException expected) {
      assertNotNull(expected.getMessage(), what + ": exception without a message");
      return 0;
    } catch (Throwable t) {
      throw new AssertionError(what + ": " + t + " instead of IllegalArgumentException", t);
    }
    assertNotNull(d, what + ": decoder returned null");
    assertEquals(d, decode.apply(encode.apply(d)), what + ": decoded descriptor does not round-trip");
    return 1;
  }

  private static int tryEngine(byte[] b, String what) {
    return tryDecode(b, EngineDesc::fromBytes, EngineDesc::toBytes, what);
  }

  private static int tryMemory(byte[] b, String what) {
    return tryDecode(b, MemoryDesc::fromBytes, MemoryDesc::toBytes, what);
  }

  @Test
  void validDescriptorsRoundTripExactly() {
    for (EngineDesc d : engineSamples()) {
      byte[] b = d.toBytes();
      EngineDesc back = EngineDesc.fromBytes(b);
      assertEquals(d, back);
      assertArrayEquals(b, back.toBytes(), "encoding is stable");
    }
    for (MemoryDesc d : memorySamples()) {
      byte[] b = d.toBytes();
      MemoryDesc back = MemoryDesc.fromBytes(b);
      assertEquals(d, back);
      for (BackendType t : BackendType.values()) assertArrayEquals(d.backendData(t), back.backendData(t), "backend data " + t);
      assertArrayEquals(b, back.toBytes(), "encoding is stable");
    }
  }

  @Test
  void nullEmptyAndOversizedInputIsRejected() {
    assertTimeoutPreemptively(LIMIT, () -> {
      assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(null));
      assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(null));
      assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(new byte[0]));
      assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(new byte[0]));
      byte[] huge = new byte[(16 << 20) + 1];
      System.arraycopy(engineSamples().get(1).toBytes(), 0, huge, 0, 6);
      assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(huge));
      System.arraycopy(memorySamples().get(0).toBytes(), 0, huge, 0, 6);
      assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(huge));
    });
  }

  @Test
  void descriptorOfTheOtherKindIsRejected() {
    byte[] e = engineSamples().get(1).toBytes();
    byte[] m = memorySamples().get(0).toBytes();
    assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(e));
    assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(m));
  }

  @Test
  void otherVersionOrMagicIsRejected() {
    byte[] e = engineSamples().get(1).toBytes();
    byte[] m = memorySamples().get(1).toBytes();
    // EngineDesc reads versions 1 to 3 (2: with backend data, 3: with an incarnation), MemoryDesc 1 and 2 (2: with one)
    for (int[] v : new int[][] {{0, 0}, {4, 3}, {0xffff, 0xffff}}) {
      byte[] ce = e.clone(), cm = m.clone();
      ce[4] = (byte) (v[0] >>> 8);
      ce[5] = (byte) v[0];
      cm[4] = (byte) (v[1] >>> 8);
      cm[5] = (byte) v[1];
      IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(ce));
      assertTrue(x.getMessage().contains("version"), x.getMessage());
      x = assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(cm));
      assertTrue(x.getMessage().contains("version"), x.getMessage());
    }
    byte[] relabelled = e.clone();
    relabelled[5] = 2; // a version-1 body claiming version 2 lacks the backend data
    assertTrue(assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(relabelled)).getMessage().contains("truncated"));
    byte[] ce = e.clone(), cm = m.clone();
    ce[0] ^= 1;
    cm[3] ^= 1;
    assertTrue(assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(ce)).getMessage().contains("magic"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(cm)).getMessage().contains("magic"));
  }

  @Test
  void incarnationsPickTheNewestFormatAndOldFormatsStayByteForByte() {
    EngineDesc withInc = engineSamples().get(6);
    byte[] b = withInc.toBytes();
    assertEquals(3, ByteBuffer.wrap(b).getShort(4), "an engine with an incarnation writes version 3");
    assertEquals(withInc, EngineDesc.fromBytes(b));
    assertEquals(0x1234_5678_9abc_def1L, EngineDesc.fromBytes(b).incarnation());
    EngineDesc noInc = new EngineDesc(withInc.key(), withInc.nodeId(), withInc.host(), withInc.port(), withInc.pid(), withInc.controlPath(),
        withInc.backends());
    assertEquals(1, ByteBuffer.wrap(noInc.toBytes()).getShort(4), "without an incarnation or data: version 1 as before");
    assertNotEquals(noInc, withInc, "the incarnation is part of the identity");
    assertEquals(0, EngineDesc.fromBytes(noInc.toBytes()).incarnation());
    // a format-3 descriptor stating incarnation 0 is malformed: 0 means "not stated", which format 3 always does
    byte[] zero = b.clone();
    int at = b.length - 1 - 8; // the incarnation sits just before the (empty) backend data count
    for (int i = 0; i < 8; i++) zero[at + i] = 0;
    assertTrue(assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(zero)).getMessage().contains("incarnation"));

    MemoryDesc m = memorySamples().get(5);
    byte[] mb = m.toBytes();
    assertEquals(2, ByteBuffer.wrap(mb).getShort(4));
    assertEquals(Long.MIN_VALUE, MemoryDesc.fromBytes(mb).ownerIncarnation());
    MemoryDesc m0 = memorySamples().get(0);
    assertEquals(1, ByteBuffer.wrap(m0.toBytes()).getShort(4), "without an incarnation: version 1 as before");
    assertNotEquals(m, new MemoryDesc(m.engineKey(), m.id(), m.deviceId(), m.address(), m.size(), m.location(), m.accessKey(), m.backendData()));
    byte[] mz = mb.clone();
    for (int i = 0; i < 8; i++) mz[mz.length - 1 - 8 + i] = 0;
    assertTrue(assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(mz)).getMessage().contains("incarnation"));
  }

  @Test
  void truncationsAtEveryLengthAreRejected() {
    assertTimeoutPreemptively(LIMIT, () -> {
      for (EngineDesc d : engineSamples()) {
        byte[] b = d.toBytes();
        for (int n = 0; n < b.length; n++) {
          byte[] t = java.util.Arrays.copyOf(b, n);
          assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(t), "EngineDesc cut to " + n + " of " + b.length);
        }
      }
      for (MemoryDesc d : memorySamples()) {
        byte[] b = d.toBytes();
        for (int n = 0; n < b.length; n++) {
          byte[] t = java.util.Arrays.copyOf(b, n);
          assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(t), "MemoryDesc cut to " + n + " of " + b.length);
        }
      }
    });
  }

  @Test
  void trailingBytesAreRejected() {
    for (EngineDesc d : engineSamples()) {
      byte[] b = java.util.Arrays.copyOf(d.toBytes(), d.toBytes().length + 1);
      assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(b));
    }
    for (MemoryDesc d : memorySamples()) {
      byte[] b = java.util.Arrays.copyOf(d.toBytes(), d.toBytes().length + 3);
      assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(b));
    }
  }

  /** Positions to mutate: all of them for small encodings, the head and tail of big ones. */
  private static int[] positions(int length) {
    if (length <= 2048) return java.util.stream.IntStream.range(0, length).toArray();
    return java.util.stream.IntStream.concat(java.util.stream.IntStream.range(0, 256),
        java.util.stream.IntStream.range(length - 256, length)).toArray();
  }

  @Test
  void singleByteMutationsYieldAnErrorOrAValidDescriptor() {
    assertTimeoutPreemptively(LIMIT, () -> {
      int[] masks = {0x01, 0x02, 0x10, 0x80, 0xff};
      int[] values = {0x00, 0x7f, 0x80, 0xff};
      int valid = 0, total = 0;
      for (EngineDesc d : engineSamples()) {
        byte[] b = d.toBytes();
        for (int i : positions(b.length)) {
          for (int m : masks) {
            byte[] c = b.clone();
            c[i] ^= (byte) m;
            valid += tryEngine(c, "EngineDesc byte " + i + " ^ " + m);
            total++;
          }
          for (int v : values) {
            byte[] c = b.clone();
            c[i] = (byte) v;
            valid += tryEngine(c, "EngineDesc byte " + i + " = " + v);
            total++;
          }
        }
      }
      for (MemoryDesc d : memorySamples()) {
        byte[] b = d.toBytes();
        for (int i : positions(b.length)) {
          for (int m : masks) {
            byte[] c = b.clone();
            c[i] ^= (byte) m;
            valid += tryMemory(c, "MemoryDesc byte " + i + " ^ " + m);
            total++;
          }
          for (int v : values) {
            byte[] c = b.clone();
            c[i] = (byte) v;
            valid += tryMemory(c, "MemoryDesc byte " + i + " = " + v);
            total++;
          }
        }
      }
      // many mutations only change a value (an id, an address, a character); the header ones must all fail
      assertTrue(valid > 0 && valid < total, valid + " of " + total + " mutations decoded");
    });
  }

  @Test
  void hugeLengthFieldsAnywhereAreRejectedWithoutAllocating() {
    assertTimeoutPreemptively(LIMIT, () -> {
      int[] lengths = {Integer.MAX_VALUE, -1, Integer.MIN_VALUE, 0x7fff_fff0, 4097, 65537, 1 << 20, 1 << 24};
      List<byte[]> encodings = new ArrayList<>();
      for (EngineDesc d : engineSamples()) encodings.add(d.toBytes());
      for (MemoryDesc d : memorySamples()) encodings.add(d.toBytes());
      for (int e = 0; e < encodings.size(); e++) {
        byte[] b = encodings.get(e);
        boolean engine = e < engineSamples().size();
        for (int i : positions(b.length - 3)) {
          for (int len : lengths) {
            byte[] c = b.clone();
            ByteBuffer.wrap(c).putInt(i, len);
            String what = (engine ? "EngineDesc" : "MemoryDesc") + " sample " + e + " int at " + i + " = " + len;
            if (engine) tryEngine(c, what);
            else tryMemory(c, what);
          }
        }
      }
    });
  }

  @Test
  void randomBytesAreRejected() {
    assertTimeoutPreemptively(LIMIT, () -> {
      SplittableRandom r = new SplittableRandom(42);
      byte[] eh = java.util.Arrays.copyOf(engineSamples().get(1).toBytes(), 6);
      byte[] mh = java.util.Arrays.copyOf(memorySamples().get(0).toBytes(), 6);
      for (int i = 0; i < 100_000; i++) {
        byte[] b = new byte[r.nextInt(400)];
        r.nextBytes(b);
        tryEngine(b, "random " + i);
        tryMemory(b, "random " + i);
        // with a valid header, the decoder has to look at the body
        if (b.length >= 6) {
          System.arraycopy(eh, 0, b, 0, 6);
          tryEngine(b, "random body " + i);
          System.arraycopy(mh, 0, b, 0, 6);
          tryMemory(b, "random body " + i);
        }
      }
    });
  }

  @Test
  void structurallyWellFormedButOutOfRangeFieldsAreRejected() {
    // hand-built encodings: right framing, wrong values
    byte[] good = engineSamples().get(1).toBytes();
    ByteBuffer g = ByteBuffer.wrap(good);
    // EngineDesc: port field follows key, nodeId, host; set it to 70000 and to -1
    int at = 6;
    for (int s = 0; s < 3; s++) at += 4 + g.getInt(at);
    for (int port : new int[] {70_000, -1, 65_536}) {
      byte[] c = good.clone();
      ByteBuffer.wrap(c).putInt(at, port);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(c));
      assertTrue(e.getMessage().contains("port"), e.getMessage());
    }
    // backends mask: last 4 bytes
    byte[] c = good.clone();
    ByteBuffer.wrap(c).putInt(c.length - 4, 1 << 7);
    assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(c));
    // empty key
    byte[] noKey = new EngineDesc("k", "n", "h", 1, 1, "p", Set.of()).toBytes();
    ByteBuffer.wrap(noKey).putInt(6, 0);
    byte[] shifted = new byte[noKey.length - 1];
    System.arraycopy(noKey, 0, shifted, 0, 10);
    System.arraycopy(noKey, 11, shifted, 10, noKey.length - 11);
    assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(shifted));

    // MemoryDesc: size <= 0, unknown location, too many or duplicate backend entries
    MemoryDesc m = memorySamples().get(0);
    byte[] mb = m.toBytes();
    int keyEnd = 6 + 4 + m.engineKey().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    int sizeAt = keyEnd + 8 + 4 + 8, locAt = sizeAt + 8, countAt = locAt + 1 + 8;
    for (long size : new long[] {0, -1, Long.MIN_VALUE}) {
      byte[] x = mb.clone();
      ByteBuffer.wrap(x).putLong(sizeAt, size);
      assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(x), "size " + size);
    }
    for (int loc : new int[] {2, 0x7f, 0xff}) {
      byte[] x = mb.clone();
      x[locAt] = (byte) loc;
      assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(x), "location " + loc);
    }
    for (int n : new int[] {4, 0xff}) {
      byte[] x = mb.clone();
      x[countAt] = (byte) n;
      assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(x), "count " + n);
    }
    // two entries for the same backend
    ByteBuffer dup = ByteBuffer.allocate(mb.length + 2 * (1 + 4 + 1));
    dup.put(mb, 0, countAt).put((byte) 2);
    for (int i = 0; i < 2; i++) dup.put((byte) BackendType.RDMA.ordinal()).putInt(1).put((byte) 9);
    byte[] d = java.util.Arrays.copyOf(dup.array(), dup.position());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MemoryDesc.fromBytes(d));
    assertTrue(e.getMessage().contains("twice"), e.getMessage());
  }

  @Test
  void invalidUtf8InStringsIsRejected() {
    byte[] b = new EngineDesc("abcd", "n", "h", 1, 1, "p", Set.of()).toBytes();
    for (byte[] bad : new byte[][] {{(byte) 0xc0, (byte) 0x80, 'a', 'b'}, {(byte) 0xff, 'b', 'c', 'd'}, {'a', (byte) 0xed, (byte) 0xa0, (byte) 0x80}}) {
      byte[] c = b.clone();
      System.arraycopy(bad, 0, c, 10, 4);
      IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> EngineDesc.fromBytes(c));
      assertTrue(ex.getMessage().contains("UTF-8"), ex.getMessage());
    }
  }
}
