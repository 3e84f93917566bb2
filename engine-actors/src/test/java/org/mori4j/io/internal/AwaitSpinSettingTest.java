package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

/** {@code mori4j.engine.await-spin}: {@code auto} by processor count, durations as given, bad values named. */
class AwaitSpinSettingTest {
  private static SettingReads.Section with(String value) {
    return SettingReads.section(ConfigFactory.parseString("mori4j.engine.await-spin = " + value), "mori4j");
  }

  @Test
  void autoIsTheDefaultAndSpinsOnlyWhereThereAreCoresToSpare() {
    SettingReads.Section reference = SettingReads.section(ConfigFactory.load(), "mori4j");
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
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> EngineSettings.awaitSpin(with("soon"), 64));
    assertEquals("mori4j.engine.await-spin (MORI_IO_AWAIT_SPIN) = 'soon' must be auto or a duration", bad.getMessage());
  }
}
