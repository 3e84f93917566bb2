package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

/**
 * A start that fails after the engine's key was reserved gives the key back: the application can fix its
 * configuration and start an engine with the same key in the same JVM, instead of being told forever that the key is
 * already open.
 */
class EngineStartFailureTest {
  @Test
  void aStartThatFailsOnItsSettingsGivesTheKeyBack() {
    String key = "start-failure-" + ProcessHandle.current().pid();
    System.setProperty("mori4j.engine.transfer-deadline", "-1s");
    ConfigFactory.invalidateCaches();
    try {
      IoEngineException e = assertThrows(IoEngineException.class, () -> IoEngine.create(key, IoEngineConfig.loopback()).close());
      assertTrue(e.getMessage().contains("transfer-deadline"), e.getMessage());
    } finally {
      System.clearProperty("mori4j.engine.transfer-deadline");
      ConfigFactory.invalidateCaches();
    }
    try (IoEngine again = IoEngine.create(key, IoEngineConfig.loopback())) {
      assertTrue(again.engineDesc().key().equals(key), "the same key starts once the settings are right");
    }
  }
}
