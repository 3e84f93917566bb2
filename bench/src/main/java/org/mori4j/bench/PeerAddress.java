package org.mori4j.bench;

import java.util.function.Function;

/**
 * The {@code --peer HOST:PORT} value: a host name, an IPv4 address or a bracketed IPv6 address
 * ({@code [::1]:2552}), and a port in 1..65535.
 *
 * @param host host without brackets
 * @param port control-plane port of the target engine
 */
public record PeerAddress(String host, int port) {

  /**
   * Parses {@code text}; errors are built by {@code error} (a usage error in the command) and name the flag.
   */
  public static <E extends RuntimeException> PeerAddress parse(String text, Function<String, E> error) {
    int colon = text == null ? -1 : text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1)
      throw error.apply("--peer must be HOST:PORT, was '" + text + "'");
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
    if (host.isBlank()) throw error.apply("--peer has an empty host: '" + text + "'");
    int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw error.apply("--peer port is not a number: '" + text + "'");
    }
    if (port < 1 || port > 65535) throw error.apply("--peer port out of range 1..65535: '" + text + "'");
    return new PeerAddress(host, port);
  }
}
