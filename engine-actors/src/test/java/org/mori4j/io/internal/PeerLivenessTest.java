package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.*;

import com.typesafe.config.ConfigFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The liveness probe's verdicts on loopback (a listening port is ALIVE, a closed one GONE, an unresolvable name
 * UNKNOWN) and its setting. The probe's use, a SIGKILLed region owner, is PeerKillTest's
 * killedOwnerWithOnlyAConfirmationOutstandingFailsWritesFast.
 */
class PeerLivenessTest {
  @Test
  void aListeningPortIsAliveAClosedOneGoneAnUnresolvableNameUnknown() throws Exception {
    InetSocketAddress at;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      at = new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
      // the kernel accepts for the listener: a process that is there but never calls accept() still counts as alive
      assertEquals(PeerLiveness.Verdict.ALIVE, PeerLiveness.connect(at, 1000));
    }
    assertEquals(PeerLiveness.Verdict.GONE, PeerLiveness.connect(at, 1000), "nothing listens on " + at + " any more");
    assertEquals(PeerLiveness.Verdict.UNKNOWN, PeerLiveness.connect(InetSocketAddress.createUnresolved("no-such-host.invalid", 25520), 1000));
  }

  @Test
  void theProbeIntervalIsADurationOrOffAndNothingElse() {
    assertEquals(Duration.ofMillis(500), PeerLiveness.probeInterval(ConfigFactory.load()), "reference.conf's default");
    assertEquals(Duration.ofSeconds(2), PeerLiveness.probeInterval(with("2s")));
    assertNull(PeerLiveness.probeInterval(with("off")));
    IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> PeerLiveness.probeInterval(with("0s")));
    assertTrue(zero.getMessage().contains("mori4j.engine.peer-liveness-probe"), zero.getMessage());
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> PeerLiveness.probeInterval(with("soon")));
    assertTrue(bad.getMessage().contains("'soon'"), bad.getMessage());
  }

  private static com.typesafe.config.Config with(String value) {
    return ConfigFactory.parseString("mori4j.engine.peer-liveness-probe = \"" + value + "\"").withFallback(ConfigFactory.load());
  }
}
