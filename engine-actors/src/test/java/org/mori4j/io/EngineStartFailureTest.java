package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

/**
 * A start refused over its settings leaves the engine's key free: the application can fix its configuration and start
 * an engine with the same key in the same JVM, instead of being told forever that the key is already open. (Settings
 * are checked before the key is taken; a start that fails after taking it, on a port in use, gives it back:
 * ControlErrorContractTest.engineOnAPortThatIsTakenFailsWithATransportErrorAndFreesItsKey.)
 */
class EngineStartFailureTest {
  @Test
  void aStartThatFailsOnItsSettingsGivesTheKeyBack() {
    String key = "start-failure-" + ProcessHandle.current().pid();
    System.setProperty("mori4j.engine.transfer-deadline", "-1s");
    ConfigFactory.invalidateCaches();
    try {
      IoEngineException e = assertThrows(IoEngineException.class, () -> IoEngine.create(key, IoEngineConfig.loopback()).close());
      assertEquals(StatusCode.ERR_INVALID_ARGS, e.code(), e.toString());
      assertTrue(e.getMessage().contains("mori4j.engine.transfer-deadline (MORI4J_TRANSFER_DEADLINE) = '-1s'"), e.getMessage());
    } finally {
      System.clearProperty("mori4j.engine.transfer-deadline");
      ConfigFactory.invalidateCaches();
    }
    try (IoEngine again = IoEngine.create(key, IoEngineConfig.loopback())) {
      assertTrue(again.engineDesc().key().equals(key), "the same key starts once the settings are right");
    }
  }
}
