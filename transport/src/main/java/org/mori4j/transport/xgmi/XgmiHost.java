package org.mori4j.transport.xgmi;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;

/**
 * Where an engine runs, as far as GPU peer copies care: the machine (its boot id, which changes with every
 * boot, and its host name), the PID namespace (CUDA IPC handles open only between processes that can see
 * each other), the process id, and a random number drawn once per JVM that tells two engines of one process
 * apart from two processes that happen to share a pid in different namespaces. The XGMI backend advertises
 * it in its engine's descriptor: two engines are on one host when boot id and PID namespace match, and in one
 * process when the process numbers match as well.
 */
public record XgmiHost(String bootId, String hostName, String pidNamespace, long pid, long processNonce) {
  private static final int VERSION = 1;
  private static final int MAX_STRING = 256;
  private static final long NONCE = new SecureRandom().nextLong();
  private static volatile XgmiHost local;

  public XgmiHost {
    if (bootId == null || hostName == null || pidNamespace == null) throw new IllegalArgumentException("host identity fields must not be null");
  }

  /** This process, read from {@code /proc} once. */
  public static XgmiHost local() {
    XgmiHost h = local;
    if (h == null) {
      local = h = new XgmiHost(read("/proc/sys/kernel/random/boot_id"), read("/proc/sys/kernel/hostname"), link("/proc/self/ns/pid"),
          ProcessHandle.current().pid(), NONCE);
    }
    return h;
  }

  /** True when {@code other} runs on this machine, in the same PID namespace (CUDA IPC can work between us). */
  public boolean sameHost(XgmiHost other) {
    // an unreadable boot id ("") never matches: without it two containers could look like one host
    return other != null && !bootId.isEmpty() && bootId.equals(other.bootId) && pidNamespace.equals(other.pidNamespace);
  }

  /** True when {@code other} is this very process. */
  public boolean sameProcess(XgmiHost other) {
    return sameHost(other) && pid == other.pid && processNonce == other.processNonce;
  }

  public byte[] encode() {
    byte[][] s = {utf8(bootId), utf8(hostName), utf8(pidNamespace)};
    ByteBuffer b = ByteBuffer.allocate(1 + 3 * 2 + s[0].length + s[1].length + s[2].length + 16);
    b.put((byte) VERSION);
    for (byte[] x : s) b.putShort((short) x.length).put(x);
    return b.putLong(pid).putLong(processNonce).array();
  }

  /** Parses {@link #encode()}'s output; throws {@link IllegalArgumentException} for anything else. */
  public static XgmiHost decode(byte[] data) {
    if (data == null) throw new IllegalArgumentException("XGMI host data missing");
    try {
      ByteBuffer b = ByteBuffer.wrap(data);
      int v = b.get() & 0xff;
      if (v != VERSION) throw new IllegalArgumentException("XGMI host data version " + v + " (this build reads " + VERSION + ")");
      String boot = string(b), host = string(b), ns = string(b);
      long pid = b.getLong();
      long nonce = b.getLong();
      if (b.hasRemaining()) throw new IllegalArgumentException("XGMI host data: " + b.remaining() + " trailing bytes");
      return new XgmiHost(boot, host, ns, pid, nonce);
    } catch (java.nio.BufferUnderflowException e) {
      throw new IllegalArgumentException("XGMI host data truncated (" + data.length + " bytes)");
    }
  }

  private static String string(ByteBuffer b) {
    int n = b.getShort() & 0xffff;
    if (n > MAX_STRING || n > b.remaining()) throw new IllegalArgumentException("XGMI host data: string of " + n + " bytes");
    byte[] x = new byte[n];
    b.get(x);
    return new String(x, StandardCharsets.UTF_8);
  }

  private static byte[] utf8(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > MAX_STRING) throw new IllegalArgumentException("host identity string longer than " + MAX_STRING + " bytes");
    return b;
  }

  private static String read(String file) {
    try {
      return Files.readString(Path.of(file)).trim();
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  private static String link(String file) {
    try {
      return Files.readSymbolicLink(Path.of(file)).toString();
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  @Override
  public String toString() {
    return hostName + " (boot " + bootId + ", " + pidNamespace + ", pid " + pid + ")";
  }
}
