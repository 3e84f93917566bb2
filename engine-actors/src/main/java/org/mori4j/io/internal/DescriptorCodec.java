package org.mori4j.io.internal;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Bounded reader and writer for the versioned binary descriptor format. Every length read from the input
 * is checked against what is left and against a hard cap before anything is allocated, so garbage input
 * fails with {@link IllegalArgumentException} instead of an out-of-memory error or a hang.
 */
public final class DescriptorCodec {
  public static final int MAX_STRING_BYTES = 4096;
  public static final int MAX_BLOB_BYTES = 64 * 1024;
  public static final int MAX_DESCRIPTOR_BYTES = 1 << 20;

  private DescriptorCodec() {}

  /** Opens {@code bytes} for reading after checking the magic and the version. */
  public static ByteBuffer open(byte[] bytes, int magic, int version, String what) {
    return open(bytes, magic, version, version, what);
  }

  /** The version of a descriptor that {@link #open(byte[], int, int, int, String)} accepted. */
  public static int version(ByteBuffer opened) {
    return opened.getShort(4) & 0xffff;
  }

  /** Opens {@code bytes} after checking the magic and that the version is in {@code [minVersion, maxVersion]}. */
  public static ByteBuffer open(byte[] bytes, int magic, int minVersion, int maxVersion, String what) {
    if (bytes == null) throw new IllegalArgumentException(what + ": bytes must not be null");
    if (bytes.length < 6) throw new IllegalArgumentException(what + ": too short (" + bytes.length + " bytes)");
    if (bytes.length > MAX_DESCRIPTOR_BYTES)
      throw new IllegalArgumentException(what + ": too long (" + bytes.length + " bytes, limit " + MAX_DESCRIPTOR_BYTES + ")");
    ByteBuffer in = ByteBuffer.wrap(bytes);
    int m = in.getInt();
    if (m != magic) throw new IllegalArgumentException(what + ": bad magic 0x" + Integer.toHexString(m));
    int v = in.getShort() & 0xffff;
    if (v < minVersion || v > maxVersion)
      throw new IllegalArgumentException(what + ": unsupported version " + v + " (this build reads "
          + (minVersion == maxVersion ? String.valueOf(minVersion) : minVersion + ".." + maxVersion) + ")");
    return in;
  }

  public static void expectEnd(ByteBuffer in, String what) {
    if (in.hasRemaining()) throw new IllegalArgumentException(what + ": " + in.remaining() + " trailing bytes");
  }

  public static String readString(ByteBuffer in, String what) {
    int n = readLength(in, MAX_STRING_BYTES, what);
    byte[] b = new byte[n];
    in.get(b);
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b)).toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(what + ": not valid UTF-8");
    }
  }

  public static byte[] readBlob(ByteBuffer in, String what) {
    int n = readLength(in, MAX_BLOB_BYTES, what);
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }

  private static int readLength(ByteBuffer in, int max, String what) {
    need(in, 4, what);
    int n = in.getInt();
    if (n < 0 || n > max) throw new IllegalArgumentException(what + ": length " + n + " out of range 0.." + max);
    need(in, n, what);
    return n;
  }

  public static void need(ByteBuffer in, int n, String what) {
    if (in.remaining() < n) throw new IllegalArgumentException(what + ": truncated (need " + n + " more bytes, have " + in.remaining() + ")");
  }

  /** Runs a decoder and turns the unchecked exceptions of buffer reads into {@link IllegalArgumentException}. */
  public static <T> T decode(String what, java.util.function.Supplier<T> decoder) {
    try {
      return decoder.get();
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException(what + ": truncated");
    }
  }

  /** Growable big-endian writer. */
  public static final class Writer {
    private ByteBuffer buf = ByteBuffer.allocate(256);

    public Writer header(int magic, int version) {
      return i32(magic).i16(version);
    }

    private void ensure(int n) {
      if (buf.remaining() < n) {
        ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + n));
        buf.flip();
        bigger.put(buf);
        buf = bigger;
      }
    }

    public Writer i8(int v) { ensure(1); buf.put((byte) v); return this; }
    public Writer i16(int v) { ensure(2); buf.putShort((short) v); return this; }
    public Writer i32(int v) { ensure(4); buf.putInt(v); return this; }
    public Writer i64(long v) { ensure(8); buf.putLong(v); return this; }

    public Writer string(String s) {
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      if (b.length > MAX_STRING_BYTES) throw new IllegalArgumentException("string longer than " + MAX_STRING_BYTES + " bytes");
      return blobUnchecked(b);
    }

    public Writer blob(byte[] b) {
      if (b.length > MAX_BLOB_BYTES) throw new IllegalArgumentException("blob longer than " + MAX_BLOB_BYTES + " bytes");
      return blobUnchecked(b);
    }

    private Writer blobUnchecked(byte[] b) {
      i32(b.length);
      ensure(b.length);
      buf.put(b);
      return this;
    }

    public byte[] toBytes() {
      byte[] out = new byte[buf.position()];
      buf.duplicate().flip().get(out);
      return out;
    }
  }
}
