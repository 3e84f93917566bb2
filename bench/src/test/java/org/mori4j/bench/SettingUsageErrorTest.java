package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A bad engine setting in the configuration (a {@code -D}, or the environment variable behind it) is a usage error
 * (exit 2) of the commands that check their TCP configuration first ({@code bench}, {@code node}), whose message is
 * the engine's refusal: the key, its environment variable and the value. A value of the wrong type (a word where a
 * number goes) is one too; before session 15 it escaped as a ConfigException and the command exited 1.
 */
class SettingUsageErrorTest {
  @ParameterizedTest(name = "{0} {1} = {2}")
  @CsvSource(delimiter = '|', value = {
      "bench | mori4j.tcp.io-threads | 0 | MORI_IO_TCP_IO_THREADS",
      "bench | mori4j.tcp.connections-per-peer | two | MORI_IO_TCP_CONNECTIONS",
      "bench | mori4j.tcp.serve-spin | 11ms | MORI_IO_TCP_SERVE_SPIN",
      "bench | mori4j.tcp.socket-buffer | 4G | MORI_IO_TCP_SOCKET_BUFFER",
      "bench | mori4j.gpu.runtime | rocm | MORI_IO_GPU_RUNTIME",
      "node | mori4j.tcp.tls | maybe | MORI4J_TCP_TLS"})
  void aBadSettingIsAUsageErrorNamingKeyVariableAndValue(String command, String key, String value, String env) {
    String before = System.setProperty(key, value);
    ConfigFactory.invalidateCaches();
    try {
      var cl = Mori4jCommand.commandLine();
      StringWriter err = new StringWriter();
      cl.setErr(new PrintWriter(err, true));
      cl.setOut(new PrintWriter(new StringWriter(), true));
      int code = cl.execute(command);
      assertEquals(2, code, err.toString());
      String firstLine = err.toString().lines().findFirst().orElse("");
      assertTrue(firstLine.contains(key + " (" + env + ") = '" + value + "'"), firstLine);
    } finally {
      if (before == null) System.clearProperty(key);
      else System.setProperty(key, before);
      ConfigFactory.invalidateCaches();
    }
  }
}
