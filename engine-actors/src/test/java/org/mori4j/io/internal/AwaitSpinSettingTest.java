package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

/** {@code mori4j.engine.await-spin}: {@code auto} by processor count, durations as given, bad values named. */
class AwaitSpinSettingTest {
  private static Config with(String value) {
    return ConfigFactory.parseString("engine.await-spin = " + value);
  }

  @Test
  void autoIsTheDefaultAndSpinsOnlyWhereThereAreCoresToSpare() {
    Config reference = ConfigFactory.load().getConfig("mori4j");
    assertEquals("auto", reference.getString("engine.await-spin"));
    assertEquals(0, EngineSettings.awaitSpin(reference, 2));
    assertEquals(0, EngineSettings.awaitSpin(reference, EngineSettings.AUTO_SPIN_MIN_CPUS - 1));
    assertEquals(EngineSettings.AUTO_SPIN_NANOS, EngineSettings.awaitSpin(reference, EngineSettings.AUTO_SPIN_MIN_CPUS));
    assertEquals(EngineSettings.AUTO_SPIN_NANOS, EngineSettings.awaitSpin(with("\" AUTO \""), 64));
  }

  @Test
  void aDurationIsUsedAsItIsWhateverTheMachine() {
    assertEquals(20_000, EngineSettings.awaitSpin(with("20us"), 2));
    assertEquals(0, EngineSettings.awaitSpin(with("0us"), 64));
  }

  @Test
  void negativeOrUnreadableValuesAreRefusedByName() {
    IllegalArgumentException neg = assertThrows(IllegalArgumentException.class, () -> EngineSettings.awaitSpin(with("-5us"), 64));
    assertTrue(neg.getMessage().contains("mori4j.engine.await-spin"), neg.getMessage());
    ConfigException bad = assertThrows(ConfigException.class, () -> EngineSettings.awaitSpin(with("soon"), 64));
    assertTrue(bad.getMessage().contains("await-spin"), bad.getMessage());
  }
}
