package org.mori4j.bench;

import com.typesafe.config.ConfigFactory;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Function;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.verbs.IbVerbs;
import org.mori4j.natives.verbs.RdmaDevices;
import org.mori4j.natives.verbs.VerbsConstants;
import org.mori4j.transport.TransportException;
import org.mori4j.transport.rdma.DeviceSelection;
import org.mori4j.transport.rdma.RdmaProviders;
import org.mori4j.transport.rdma.ibv.IbverbsProvider;
import org.mori4j.transport.rdma.verbs.PortInfo;
import org.mori4j.transport.rdma.verbs.VerbsDevice;
import org.mori4j.transport.rdma.verbs.VerbsProvider;
import picocli.CommandLine.Command;

/**
 * {@code mori4j info}: this host as an engine started here would see it, so that "why did my engine not use
 * RDMA / XGMI" has an answer before anything runs. It lists the RDMA devices and their ports through the
 * ibverbs provider (or says why there are none: libibverbs not loadable, no RDMA support in the kernel, nothing
 * listed), the GPUs of the configured GPU runtime with their PCI ids and the peer-access matrix (or the
 * runtime's reason for there being none), which provider {@code mori4j.rdma.provider = auto} would choose and
 * why, and which backends {@code createBackend} would start: TCP always, XGMI only with a GPU runtime, RDMA on
 * ibverbs only with a device, and on the software provider (emulation) only when it is named. It starts no
 * engine and changes nothing; every probe that fails is printed as its reason, never as an exit code. With
 * {@code --probe} it does start two engines ({@link InfoProbe}) and prints their own explanation of each path.
 */
@Command(name = "info", mixinStandardHelpOptions = true,
    description = "Print this host's view: RDMA devices and ports, libibverbs, GPUs and peer access, and which backends an engine would start.")
public final class InfoCommand implements Callable<Integer> {
  @picocli.CommandLine.Option(names = "--probe", description = "Also start two engines on loopback here, ask each for every backend, and print"
      + " the path (explain) a transfer between them takes for host and GPU memory, and why not the other backends.")
  boolean probe;

  @Override
  public Integer call() {
    String provider = RdmaFlags.configuredProvider();
    com.typesafe.config.Config config = ConfigFactory.load();
    String devices = config.hasPath("mori4j.rdma.devices") ? config.getString("mori4j.rdma.devices") : "";
    RdmaDevices.Inventory inventory = RdmaDevices.inventory();
    GpuRuntime gpu = BenchGpu.runtime();
    StringBuilder out = new StringBuilder();
    out.append(String.format(Locale.ROOT, "mori4j info: %d CPUs, %s %s, java %s%n%n", Runtime.getRuntime().availableProcessors(),
        System.getProperty("os.name"), System.getProperty("os.arch"), System.getProperty("java.version")));
    out.append(rdma(new IbverbsProvider(), inventory, RdmaProviders.ibverbsLoads(), IbVerbs.absence(), provider, devices,
        autoChoice(RdmaFlags::engineChoice)));
    out.append('\n');
    out.append(gpu(gpu, BenchGpu.mode()));
    out.append('\n');
    out.append(backends(inventory, gpu, provider));
    if (probe) out.append('\n').append(InfoProbe.run(gpu));
    else out.append("\n(--probe starts two engines here and prints the path each kind of transfer between them takes, and why)\n");
    System.out.print(out);
    System.out.flush();
    return 0;
  }

  /**
   * What {@code mori4j.rdma.provider = auto} gives an engine here, from the engine's own choice ({@code select}):
   * the provider and its devices, or the refusal {@code createBackend(RDMA)} would fail with.
   */
  static String autoChoice(Function<String, VerbsProvider> select) {
    try {
      VerbsProvider p = select.apply("auto");
      return p.name() + (p.emulated() ? " (emulation)" : "") + ", because it lists " + p.deviceNames();
    } catch (TransportException e) {
      return "no provider: createBackend(RDMA) fails with \"" + e.getMessage() + "\"; auto never falls back to the software provider";
    }
  }

  /** The RDMA section: libibverbs, the devices with their ports (opened through {@code ibv}), the selection and the provider auto picks. */
  static String rdma(VerbsProvider ibv, RdmaDevices.Inventory inventory, boolean libibverbsLoads, String absence, String provider, String deviceSpec,
                     String autoChoice) {
    StringBuilder sb = new StringBuilder("RDMA\n");
    sb.append("  libibverbs: ").append(libibverbsLoads ? "loads" : "does not load: " + absence).append('\n');
    if (inventory.isEmpty()) {
      sb.append("  devices: none: ").append(inventory.whyNone()).append('\n');
    } else {
      sb.append("  devices: ").append(String.join(", ", inventory.devices())).append('\n');
      for (String name : inventory.devices()) sb.append(device(ibv, name));
    }
    sb.append("  MORI_RDMA_DEVICES (mori4j.rdma.devices): ").append(deviceSpec.isBlank() ? "unset (every device)" : "'" + deviceSpec + "'");
    if (!inventory.isEmpty()) {
      try {
        sb.append(" -> ").append(DeviceSelection.select(deviceSpec, inventory.devices()));
      } catch (IllegalArgumentException e) {
        sb.append(" -> refused: ").append(e.getMessage());
      }
    }
    sb.append('\n');
    sb.append("  mori4j.rdma.provider (MORI4J_RDMA_PROVIDER): ").append(provider).append('\n');
    sb.append("  auto would choose: ").append(autoChoice).append('\n');
    sb.append("  software provider: only when named (--rdma-provider software, MORI4J_RDMA_PROVIDER=software): a user-space RDMA device "
        + "in Java over TCP, emulation, never NIC performance\n");
    return sb.toString();
  }

  /** One device's attributes and ports, or why it could not be opened. */
  static String device(VerbsProvider ibv, String name) {
    StringBuilder sb = new StringBuilder();
    try (VerbsDevice d = ibv.open(name)) {
      sb.append(String.format(Locale.ROOT, "    %s: %d port(s), max_qp_wr %d, max_cqe %d%n", d.name(), d.portCount(),
          d.maxQueuePairWorkRequests(), d.maxCompletionQueueEntries()));
      for (int p = 1; p <= d.portCount(); p++) {
        try {
          PortInfo port = d.queryPort(p);
          String gid;
          try {
            gid = port.gidTableLength() > 0 ? gid(d.queryGid(p, 0)) : "none";
          } catch (RuntimeException e) {
            gid = "not readable: " + e.getMessage();
          }
          sb.append(String.format(Locale.ROOT, "      port %d: %s, %s, active MTU %s, LID %d, GID[0] %s%n", p, portState(port.state()),
              linkLayer(port.linkLayer()), mtu(port.activeMtu()), port.lid(), gid));
        } catch (RuntimeException e) {
          sb.append(String.format(Locale.ROOT, "      port %d: not readable: %s%n", p, e.getMessage()));
        }
      }
    } catch (RuntimeException e) {
      sb.append("    ").append(name).append(": cannot be opened: ").append(e.getMessage()).append('\n');
    }
    return sb.toString();
  }

  /** The GPU section: the runtime, each device with its PCI id, and which device can access which. */
  static String gpu(GpuRuntime gpu, String mode) {
    StringBuilder sb = new StringBuilder("GPUs\n");
    sb.append("  mori4j.gpu.runtime (MORI_IO_GPU_RUNTIME): ").append(mode).append('\n');
    if (!gpu.available()) {
      sb.append("  no GPU runtime: ").append(gpu.version()).append('\n');
      return sb.toString();
    }
    int n;
    try {
      n = gpu.deviceCount();
    } catch (RuntimeException e) {
      sb.append("  runtime ").append(gpu.name()).append(" opened, but its devices cannot be counted: ").append(e.getMessage()).append('\n');
      return sb.toString();
    }
    sb.append("  runtime: ").append(gpu.name()).append(' ').append(gpu.version()).append(", ").append(n).append(" device(s)\n");
    for (int d = 0; d < n; d++) {
      try {
        sb.append(String.format(Locale.ROOT, "    GPU%d: %s, PCI %s, compute capability %d, %d SMs, %s%n", d, gpu.deviceName(d), gpu.pciBusId(d),
            gpu.computeCapability(d), gpu.multiprocessorCount(d), HumanSize.format(gpu.memoryInfo(d).total())));
      } catch (RuntimeException e) {
        sb.append(String.format(Locale.ROOT, "    GPU%d: not readable: %s%n", d, e.getMessage()));
      }
    }
    if (n > 1) {
      sb.append("  peer access (canAccessPeer, row -> column):\n");
      sb.append("         ");
      for (int c = 0; c < n; c++) sb.append(String.format(Locale.ROOT, "%6s", "GPU" + c));
      sb.append('\n');
      for (int r = 0; r < n; r++) {
        sb.append(String.format(Locale.ROOT, "    %-5s", "GPU" + r));
        for (int c = 0; c < n; c++) sb.append(String.format(Locale.ROOT, "%6s", r == c ? "-" : peer(gpu, r, c)));
        sb.append('\n');
      }
    } else {
      sb.append("  peer access: one device, nothing to access\n");
    }
    return sb.toString();
  }

  private static String peer(GpuRuntime gpu, int from, int to) {
    try {
      return gpu.canAccessPeer(from, to) ? "yes" : "no";
    } catch (RuntimeException e) {
      return "?";
    }
  }

  /** Which backends {@code createBackend} would start on this host, and why not where not. */
  static String backends(RdmaDevices.Inventory inventory, GpuRuntime gpu, String provider) {
    StringBuilder sb = new StringBuilder("Backends an engine here would start\n");
    sb.append("  tcp:  yes (always)\n");
    if (gpu.available()) {
      int n = -1;
      try {
        n = gpu.deviceCount();
      } catch (RuntimeException ignored) {
        // said in the GPU section
      }
      sb.append("  xgmi: ").append(n > 0 ? "yes, " + gpu.name() + " with " + n + " device(s) (between devices only where peer access allows it)"
          : "no: the " + gpu.name() + " runtime has no device").append('\n');
    } else {
      sb.append("  xgmi: no: no GPU runtime (why: under GPUs)\n");
    }
    List<String> rdma = new ArrayList<>();
    if (inventory.isEmpty()) {
      rdma.add("with auto or ibverbs: no, no RDMA device on this machine (why: under RDMA)");
    } else {
      rdma.add("with auto or ibverbs: yes, ibverbs on " + inventory.devices());
    }
    rdma.add("with software: yes, when named (emulation)");
    sb.append("  rdma: ").append(String.join("; ", rdma)).append(" [configured: ").append(provider).append("]\n");
    return sb.toString();
  }

  private static String portState(int state) {
    return switch (state) {
      case VerbsConstants.IBV_PORT_NOP -> "NOP";
      case VerbsConstants.IBV_PORT_DOWN -> "DOWN";
      case VerbsConstants.IBV_PORT_INIT -> "INIT";
      case VerbsConstants.IBV_PORT_ARMED -> "ARMED";
      case VerbsConstants.IBV_PORT_ACTIVE -> "ACTIVE";
      default -> "state " + state;
    };
  }

  private static String linkLayer(int layer) {
    return switch (layer) {
      case VerbsConstants.IBV_LINK_LAYER_INFINIBAND -> "InfiniBand";
      case VerbsConstants.IBV_LINK_LAYER_ETHERNET -> "Ethernet (RoCE)";
      default -> "link layer unspecified";
    };
  }

  private static String mtu(int ibvMtu) {
    return ibvMtu >= VerbsConstants.IBV_MTU_256 && ibvMtu <= VerbsConstants.IBV_MTU_4096 ? Integer.toString(128 << ibvMtu) : "? (" + ibvMtu + ")";
  }

  private static String gid(byte[] raw) {
    String hex = HexFormat.of().formatHex(raw);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < hex.length(); i += 4) {
      if (i > 0) sb.append(':');
      sb.append(hex, i, Math.min(i + 4, hex.length()));
    }
    return sb.toString();
  }
}
