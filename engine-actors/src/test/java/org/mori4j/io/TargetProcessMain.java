package org.mori4j.io;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A target engine in its own JVM, for tests that need a peer they can kill: starts an engine with the suite's
 * data backend ({@link TestBackends}) on loopback, registers one buffer, publishes it as "buf", prints {@code READY <host> <port>} and
 * waits, answering notification queries (see below). It exits when its standard input closes (the test JVM went away) or after a safety limit.
 *
 * <p>Arguments: engine key, buffer size in bytes (optional, default 8 MiB), control port (optional, default 0: a
 * free one; a fixed one lets a test restart the target under the same key and address).
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
    int port = args.length > 2 ? Integer.parseInt(args[2]) : 0;
    IoEngine engine = IoEngine.create(key, new IoEngineConfig("127.0.0.1", port));
    TestBackends.create(engine);
    MemorySegment buf = Arena.global().allocate(size, 4096);
    MemoryDesc desc = engine.registerMemory(buf);
    engine.publishMemory("buf", desc);
    EngineDesc me = engine.engineDesc();
    System.out.println("READY " + me.host() + " " + me.port());
    System.out.flush();
    // wait until the parent closes our stdin (or dies); a SIGKILL ends us before that in the kill test. A line
    // "POP <initiator key> <uid>" answers "POPPED <status code>" or "POPPED NONE" (the target's notifications). A line
    // "WRITE <host> <port> <name>" makes this engine an initiator too: it registers the engine at host:port and writes
    // 4 KiB of its buffer into that engine's memory published as name (over RDMA this confirms the region with its
    // owner, which remembers this engine as an importer), answering "WROTE <status code>".
    java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] w = line.trim().split(" ");
      if (w.length == 3 && w[0].equals("POP")) {
        var n = engine.popInboundTransferStatus(w[1], Long.parseLong(w[2]));
        System.out.println("POPPED " + n.map(t -> t.code().name()).orElse("NONE"));
        System.out.flush();
      } else if (w.length == 4 && w[0].equals("WRITE")) {
        EngineDesc other = engine.discover(w[1], Integer.parseInt(w[2]));
        MemoryDesc to = engine.lookupMemory(other, w[3]).orElseThrow(() -> new IllegalStateException("no memory published as '" + w[3] + "'"));
        engine.registerRemoteEngine(other);
        TransferStatus s = engine.write(desc, 0, to, 0, 4096, engine.allocateTransferUid());
        s.await(java.time.Duration.ofSeconds(30));
        System.out.println("WROTE " + s.code().name());
        System.out.flush();
      }
    }
    engine.close();
    System.exit(0);
  }
}
