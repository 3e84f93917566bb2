package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

/** Settings read as MORI reads its environment variables. */
class ShmemConfigTest {

  @Test
  void sizesUseMorisSuffixesAllPowersOf1024() {
    assertEquals(6L << 30, ShmemConfig.parseSize("6G", "x"));
    assertEquals(512L << 20, ShmemConfig.parseSize("512M", "x"));
    assertEquals(2L << 30, ShmemConfig.parseSize("2GiB", "x"));
    assertEquals(3L << 20, ShmemConfig.parseSize("3mib", "x"));
    assertEquals(4L << 10, ShmemConfig.parseSize("4KB", "x"));
    assertEquals(4L << 10, ShmemConfig.parseSize("4k", "x"));
    assertEquals(1L << 30, ShmemConfig.parseSize("1gb", "x"));
    assertEquals(12345, ShmemConfig.parseSize("12345", "x"));
  }

  @Test
  void aValueThatIsNotASizeIsRefusedNamingTheSetting() {
    for (String bad : new String[] {"", "G", "6T", "-1G", "1.5G", "six", "99999999999999999999"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ShmemConfig.parseSize(bad, "MORI_SHMEM_HEAP_SIZE"), bad);
      assertTrue(e.getMessage().contains("MORI_SHMEM_HEAP_SIZE"), e.getMessage());
    }
  }

  @Test
  void switchesAreOffOnlyWhenUnsetEmptyOrFalse() {
    for (String off : new String[] {null, "", " ", "0", "false", "OFF", "No"}) assertFalse(ShmemConfig.parseEnabled(off), String.valueOf(off));
    for (String on : new String[] {"1", "ON", "true", "yes", "anything"}) assertTrue(ShmemConfig.parseEnabled(on), on);
  }

  @Test
  void defaultsAreMorisAndTheEnvironmentVariablesOverrideThem() {
    ShmemConfig d = ShmemConfig.from(ConfigFactory.parseString("").withFallback(ConfigFactory.defaultReference()).resolve());
    if (System.getenv("MORI_SHMEM_HEAP_SIZE") == null) assertEquals(4L << 30, d.heapSize(), "MORI's static heap default is 4 GiB");
    ShmemConfig c = ShmemConfig.from(ConfigFactory.parseString("mori4j.shmem { heap-size = \"2G\", disable-p2p = ON, device = 1 }")
        .withFallback(ConfigFactory.defaultReference()).resolve());
    assertEquals(2L << 30, c.heapSize());
    assertTrue(c.disableP2p());
    assertEquals(1, c.device());
  }

  @Test
  void aHeapTooSmallForTheLibrarysWordsIsRefused() {
    ShmemConfig c = ShmemConfig.load();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.withHeapSize(4096));
    assertTrue(e.getMessage().contains("4096"), e.getMessage());
  }
}
