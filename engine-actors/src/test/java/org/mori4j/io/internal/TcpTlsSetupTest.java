package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.*;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.io.TcpTlsConfig;

/**
 * How {@code mori4j.tcp.tls*} and the ActorSystem's Artery settings decide the data path's TLS: {@code auto}
 * follows Artery's transport and borrows its stores, {@code on} needs stores from somewhere, and bad values are
 * refused with the key and the value named.
 */
class TcpTlsSetupTest {
  @TempDir
  Path dir;

  private static SettingReads.Section tcp(String extra) {
    return SettingReads.section(ConfigFactory.parseString(extra).withFallback(ConfigFactory.defaultReference()), "mori4j.tcp");
  }

  @Test
  void defaultsAreAutoWithTheClusterStoresAndHostnameVerification() {
    TcpTlsConfig c = TcpTlsSetup.fromConfig(tcp(""));
    assertEquals(TcpTlsConfig.Mode.AUTO, c.mode());
    assertNull(c.keyStore());
    assertTrue(c.hostnameVerification());
    assertNull(TcpTlsSetup.resolve(c, ConfigFactory.load()), "auto without Artery TLS is plain TCP");
  }

  @Test
  void autoFollowsArteryTlsAndBorrowsItsStores() {
    // stores that do not exist: the refusal names the path, which shows where it was taken from
    String ssl = "pekko.remote.artery.ssl.config-ssl-engine.";
    Path clusterKeys = dir.resolve("cluster-node.p12");
    Config system = ConfigFactory.parseString("pekko.remote.artery.transport = tls-tcp\n"
        + ssl + "key-store = \"" + clusterKeys + "\"\n" + ssl + "key-store-password = a\n" + ssl + "key-password = a\n"
        + ssl + "trust-store = \"" + dir.resolve("cluster-trust.p12") + "\"\n" + ssl + "trust-store-password = b");
    assertTrue(TcpTlsSetup.clusterTls(system));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TcpTlsSetup.resolve(TcpTlsConfig.auto(), system));
    assertTrue(e.getMessage().contains(clusterKeys.toString()), "auto with Artery TLS opens the cluster's key store: " + e.getMessage());
    assertNull(TcpTlsSetup.resolve(TcpTlsConfig.off(), system), "off wins over the cluster");
    // a store of its own wins over the cluster's
    Path own = dir.resolve("own.p12");
    IllegalArgumentException o = assertThrows(IllegalArgumentException.class,
        () -> TcpTlsSetup.resolve(TcpTlsConfig.on(own, "x", own, "x"), system));
    assertTrue(o.getMessage().contains(own.toString()), o.getMessage());
    assertFalse(TcpTlsSetup.clusterTls(ConfigFactory.load()), "this JVM's default configuration runs no Artery TLS");
  }

  @Test
  void onWithoutStoresOrClusterIsRefused() {
    TcpTlsConfig on = TcpTlsSetup.fromConfig(tcp("mori4j.tcp.tls = on"));
    assertEquals(TcpTlsConfig.Mode.ON, on.mode());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TcpTlsSetup.resolve(on, ConfigFactory.load()));
    assertTrue(e.getMessage().contains("mori4j.tcp.tls-key-store"), e.getMessage());
    TcpTlsConfig missing = TcpTlsConfig.on(dir.resolve("absent.p12"), "x", dir.resolve("absent.p12"), "x");
    IllegalArgumentException m = assertThrows(IllegalArgumentException.class, () -> TcpTlsSetup.resolve(missing, ConfigFactory.load()));
    assertTrue(m.getMessage().contains("absent.p12") && m.getMessage().contains("does not exist"), m.getMessage());
  }

  @Test
  void aModeThatIsNotOnOffOrAutoIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TcpTlsSetup.fromConfig(tcp("mori4j.tcp.tls = maybe")));
    assertEquals("mori4j.tcp.tls (MORI4J_TCP_TLS) = 'maybe' must be on, off or auto", e.getMessage());
    assertEquals(TcpTlsConfig.Mode.OFF, TcpTlsSetup.fromConfig(tcp("mori4j.tcp.tls = false")).mode());
  }
}
