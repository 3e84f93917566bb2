package org.mori4j.examples;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;

import org.junit.jupiter.api.Test;

/** Every example runs to the end; each one throws when its own check of the moved bytes fails. */
class ExamplesRunTest {
  @Test
  void basicReadWriteRuns() {
    assertDoesNotThrow(() -> BasicReadWrite.main(new String[0]));
  }

  @Test
  void batchAndSessionRuns() {
    assertDoesNotThrow(() -> BatchAndSession.main(new String[0]));
  }

  @Test
  void actorApiExampleRuns() {
    assertDoesNotThrow(() -> ActorApiExample.main(new String[0]));
  }

  @Test
  void clusterKvCacheRuns() {
    // three JVMs (this one and two children), one SIGKILLed: about 40 s on a 2-core machine
    assertDoesNotThrow(() -> ClusterKvCache.main(new String[0]));
  }
}
