package org.mori4j.bench;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one line {@code mori4j serve} prints on stdout once it accepts transfers:
 * {@code MORI4J-READY host=<h> port=<p> nio=<port>}. It tells a spawning {@code bench} (or a script) where
 * the target engine's control plane and the plain-NIO baseline server listen. A line protocol instead of a
 * file or a fixed port because both ports are picked by the kernel (port 0) to avoid clashes.
 *
 * @param host    the engine's control-plane host
 * @param port    the engine's control-plane port (for {@code discover})
 * @param nioPort the NIO baseline server's port on the same host
 */
public record ReadyLine(String host, int port, int nioPort) {
  public static final String PREFIX = "MORI4J-READY";
  private static final Pattern LINE = Pattern.compile("^" + PREFIX + " host=(\\S+) port=(\\d{1,5}) nio=(\\d{1,5})\\s*$");

  public String format() {
    return PREFIX + " host=" + host + " port=" + port + " nio=" + nioPort;
  }

  /** Parses a READY line; throws {@link IllegalArgumentException} quoting the line otherwise. */
  public static ReadyLine parse(String line) {
    Matcher m = line == null ? null : LINE.matcher(line);
    if (m == null || !m.matches()) throw new IllegalArgumentException("not a READY line: '" + line + "'");
    int port = Integer.parseInt(m.group(2));
    int nio = Integer.parseInt(m.group(3));
    if (port > 65535 || nio > 65535) throw new IllegalArgumentException("port out of range in '" + line + "'");
    return new ReadyLine(m.group(1), port, nio);
  }
}
