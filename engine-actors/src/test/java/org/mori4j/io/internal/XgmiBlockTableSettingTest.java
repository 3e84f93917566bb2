package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

/** {@code mori4j.xgmi.block-table}: {@code mapped} by default, {@code device} on request, anything else refused by name. */
class XgmiBlockTableSettingTest {
  @Test
  void mappedIsTheDefaultDeviceCopiesAndOtherValuesAreRefusedByName() {
    assertEquals("mapped", ConfigFactory.load().getString("mori4j.xgmi.block-table"));
    assertTrue(EngineSettings.load().xgmiMappedTable());
    assertFalse(EngineSettings.xgmiBlockTable(with("\" Device \"")));
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> EngineSettings.xgmiBlockTable(with("pinned")));
    assertEquals("mori4j.xgmi.block-table (MORI_IO_XGMI_BLOCK_TABLE) = 'pinned' must be mapped or device", bad.getMessage());
  }

  private static SettingReads.Section with(String value) {
    return SettingReads.section(ConfigFactory.parseString("mori4j.xgmi.block-table = " + value), "mori4j");
  }
}
