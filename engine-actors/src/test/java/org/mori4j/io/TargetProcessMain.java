package org.mori4j.io;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A target engine in its own JVM, for tests that need a peer they can kill: starts an engine with the suite's
 * data backend ({@link TestBackends}) on loopback, registers one buffer, publishes it as "buf", prints {@code READY <host> <port>} and
 * waits. It exits when its standard input closes (the test JVM went away) or after a safety limit.
 *
 * <p>Arguments: engine key, buffer size in bytes (optional, default 8 MiB).
 */
public final class TargetProcessMain {
  private TargetProcessMain() {}

  public static void main(String[] args) throws Exception {
    String key = args.length > 0 ? args[0] : "child-target-" + ProcessHandle.current().pid();
    long size = args.length > 1 ? Long.parseLong(args[1]) : 8L << 20;
    Thread limit = new Thread(() -> {
      try {
        Thread.sleep(180_000);
      } catch (InterruptedException ignored) {
        return;
      }
      System.exit(3);
    });
    limit.setDaemon(true);
    limit.start();
    IoEngine engine = IoEngine.create(key, IoEngineConfig.loopback());
    TestBackends.create(engine);
    MemorySegment buf = Arena.global().allocate(size, 4096);
    MemoryDesc desc = engine.registerMemory(buf);
    engine.publishMemory("buf", desc);
    EngineDesc me = engine.engineDesc();
    System.out.println("READY " + me.host() + " " + me.port());
    System.out.flush();
    // wait until the parent closes our stdin (or dies); a SIGKILL ends us before that in the kill test
    while (System.in.read() >= 0) {
      // ignore input
    }
    engine.close();
    System.exit(0);
  }
}
