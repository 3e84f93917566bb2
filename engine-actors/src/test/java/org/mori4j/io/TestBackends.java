package org.mori4j.io;

import java.util.ArrayList;
import java.util.List;

/**
 * Which data backend the engine behaviour suites run on. By default TCP; the build runs the same suites again with
 * {@code -Dmori4j.test.backend=rdma} (and {@code -Dmori4j.rdma.provider=software}, the emulated RDMA device), with
 * the queue pairs per transfer and the poll mode from {@code mori4j.test.rdma.qp} and {@code mori4j.test.rdma.poll}.
 * TCP settings a test asks for are carried over where RDMA has them: connections per peer become queue pairs per
 * transfer, {@code enableNotification} stays. Child JVMs get the same choice through {@link #childJvmFlags()}.
 */
final class TestBackends {
  private TestBackends() {}

  static boolean rdma() {
    return "rdma".equals(System.getProperty("mori4j.test.backend", "tcp"));
  }

  static BackendType type() {
    return rdma() ? BackendType.RDMA : BackendType.TCP;
  }

  static RdmaBackendConfig rdmaConfig() {
    RdmaBackendConfig d = RdmaBackendConfig.defaults();
    int qp = Integer.getInteger("mori4j.test.rdma.qp", d.qpPerTransfer());
    PollCqMode mode = PollCqMode.valueOf(System.getProperty("mori4j.test.rdma.poll", d.pollCqMode().name()));
    return d.withQpPerTransfer(qp).withPollCqMode(mode);
  }

  /** The data backend of a test engine: {@code tcp} as given, or RDMA with what of it applies. */
  static void create(IoEngine engine, TcpBackendConfig tcp) {
    if (!rdma()) {
      engine.createBackend(BackendType.TCP, tcp);
      return;
    }
    RdmaBackendConfig r = rdmaConfig().withEnableNotification(tcp.enableNotification());
    if (tcp.connectionsPerPeer() > 1 && r.qpPerTransfer() == 1) r = r.withQpPerTransfer(tcp.connectionsPerPeer());
    engine.createBackend(BackendType.RDMA, r);
  }

  static void create(IoEngine engine) {
    create(engine, TcpBackendConfig.defaults());
  }

  /** The flags that give a child JVM the same backend. */
  static List<String> childJvmFlags() {
    List<String> flags = new ArrayList<>();
    for (String p : List.of("mori4j.test.backend", "mori4j.test.rdma.qp", "mori4j.test.rdma.poll", "mori4j.rdma.provider",
        "mori4j.rdma.stripe-threshold")) {
      String v = System.getProperty(p);
      if (v != null) flags.add("-D" + p + "=" + v);
    }
    return flags;
  }

  /** For messages: what the suite runs on. */
  static String describe() {
    return rdma() ? "RDMA (" + System.getProperty("mori4j.rdma.provider", "auto") + " provider) " + rdmaConfig() : "TCP";
  }
}
