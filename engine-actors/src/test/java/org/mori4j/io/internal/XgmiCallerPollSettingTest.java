package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

/** {@code mori4j.xgmi.caller-poll}: off (the default), auto (the resolved await spin), durations as given, bad values named. */
class XgmiCallerPollSettingTest {
  private static SettingReads.Section with(String value) {
    return SettingReads.section(ConfigFactory.parseString("mori4j.xgmi.caller-poll = " + value), "mori4j");
  }

  @Test
  void offIsTheDefaultAndAutoFollowsTheAwaitSpin() {
    SettingReads.Section reference = SettingReads.section(ConfigFactory.load(), "mori4j");
    assertEquals(-1, EngineSettings.xgmiCallerPoll(reference, 50_000), "off by default");
    assertEquals(50_000, EngineSettings.xgmiCallerPoll(with("auto"), 50_000));
    assertEquals(0, EngineSettings.xgmiCallerPoll(with("auto"), 0), "no await spin: the caller issues but does not poll");
  }

  @Test
  void offDurationsAndBadValues() {
    assertEquals(-1, EngineSettings.xgmiCallerPoll(with("off"), 50_000));
    assertEquals(-1, EngineSettings.xgmiCallerPoll(with("\" OFF \""), 50_000));
    assertEquals(20_000, EngineSettings.xgmiCallerPoll(with("20us"), 0));
    assertEquals(0, EngineSettings.xgmiCallerPoll(with("0us"), 50_000));
    IllegalArgumentException neg = assertThrows(IllegalArgumentException.class, () -> EngineSettings.xgmiCallerPoll(with("-5us"), 0));
    assertTrue(neg.getMessage().contains("mori4j.xgmi.caller-poll"), neg.getMessage());
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> EngineSettings.xgmiCallerPoll(with("soon"), 0));
    assertEquals("mori4j.xgmi.caller-poll (MORI_IO_XGMI_CALLER_POLL) = 'soon' must be off, auto or a duration", bad.getMessage());
  }
}
