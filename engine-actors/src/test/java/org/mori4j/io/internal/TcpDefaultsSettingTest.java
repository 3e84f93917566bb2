package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.mori4j.io.TcpBackendConfig;

/**
 * {@code mori4j.tcp}'s backend defaults are checked key by key in {@link EngineSettings#tcpDefaults} so that a refusal
 * names the key; the record's constructor checks the same values under its parameters' names. Both must refuse the
 * same values: each case is given to both, the record built straight from the configuration's typed values.
 */
class TcpDefaultsSettingTest {
  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource(delimiter = '|', value = {
      "connections-per-peer | 0", "connections-per-peer | 1", "connections-per-peer | 64", "connections-per-peer | 65",
      "io-threads | 0", "io-threads | 1", "io-threads | 64", "io-threads | 65",
      "stripe-threshold | 4095", "stripe-threshold | 4096", "stripe-threshold | 16MiB",
      "socket-buffer | 0", "socket-buffer | 1", "socket-buffer | 2047MiB", "socket-buffer | 2147483647", "socket-buffer | 2G",
      "socket-buffer | 3GiB", "socket-buffer | 4G", "socket-buffer | 4194305K",
      "peer-timeout | 0s", "peer-timeout | -1s", "peer-timeout | 1ms",
      "connect-timeout | 0s", "connect-timeout | -1ms", "connect-timeout | 1ns"})
  void theReaderAndTheRecordRefuseTheSameValues(String key, String value) {
    Config root = ConfigFactory.parseString("mori4j.tcp." + key + " = \"" + value + "\"").withFallback(ConfigFactory.defaultReference());
    Config tcp = root.getConfig("mori4j.tcp");
    long socketBuffer = tcp.getBytes("socket-buffer");
    if (socketBuffer != (int) socketBuffer) {
      // the record's parameter is an int, as the socket options are: it cannot be given this, and the reader refuses it
      // naming the range instead of cutting it to 32 bits (2 to 4 GiB negative, 4 GiB and more a small size)
      SettingReads.Refused e = assertThrows(SettingReads.Refused.class, () -> EngineSettings.tcpDefaults(SettingReads.section(root, "mori4j.tcp")));
      assertEquals("mori4j.tcp.socket-buffer", e.key());
      assertTrue(e.getMessage().contains(" = '" + value + "' must be in 0..2147483647 bytes"), e.getMessage());
      return;
    }
    TcpBackendConfig record;
    try {
      record = new TcpBackendConfig(tcp.getInt("connections-per-peer"), tcp.getInt("io-threads"), tcp.getBytes("stripe-threshold"),
          (int) socketBuffer, tcp.getDuration("peer-timeout"), tcp.getDuration("connect-timeout"),
          tcp.getBoolean("enable-notification"));
    } catch (IllegalArgumentException recordRefused) {
      SettingReads.Refused e = assertThrows(SettingReads.Refused.class, () -> EngineSettings.tcpDefaults(SettingReads.section(root, "mori4j.tcp")),
          "the record refuses it (" + recordRefused.getMessage() + "), so must the reader");
      assertEquals("mori4j.tcp." + key, e.key());
      assertTrue(e.getMessage().contains(" = '" + value + "' "), e.getMessage());
      return;
    }
    TcpBackendConfig read = EngineSettings.tcpDefaults(SettingReads.section(root, "mori4j.tcp"));
    assertEquals(record, read.withTls(record.tls()), "both accept it, with the same values");
  }
}
