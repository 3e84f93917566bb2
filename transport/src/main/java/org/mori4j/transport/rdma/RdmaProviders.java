package org.mori4j.transport.rdma;

import java.util.Locale;
import org.mori4j.natives.verbs.IbVerbs;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;
import org.mori4j.transport.rdma.ibv.IbverbsProvider;
import org.mori4j.transport.rdma.soft.SoftwareVerbsProvider;
import org.mori4j.transport.rdma.verbs.VerbsProvider;

/**
 * The choice of verbs provider ({@code mori4j.rdma.provider}, environment {@code MORI4J_RDMA_PROVIDER}):
 * {@code ibverbs} for real NICs, {@code software} for the emulated device, and {@code auto}, which takes ibverbs
 * when it lists a device and otherwise fails with the "no RDMA device" error. Nothing falls back to emulation by
 * itself: the software provider runs only when asked for by name.
 */
public final class RdmaProviders {
  private RdmaProviders() {}

  /** The provider {@code mode} names; throws {@link TransportException} ({@code RDMA_OP}) saying why none can run. */
  public static VerbsProvider select(String mode, String bindHost, DeviceStaging staging) {
    String m = mode == null ? "auto" : mode.trim().toLowerCase(Locale.ROOT);
    return switch (m) {
      case "software" -> new SoftwareVerbsProvider(bindHost, staging);
      case "ibverbs" -> {
        IbverbsProvider p = new IbverbsProvider();
        if (p.deviceNames().isEmpty())
          throw new TransportException(TransportError.RDMA_OP, "no RDMA device on this machine: " + p.whyNoDevice());
        yield p;
      }
      case "auto" -> {
        IbverbsProvider p = new IbverbsProvider();
        if (p.deviceNames().isEmpty())
          throw new TransportException(TransportError.RDMA_OP, "no RDMA device on this machine: " + p.whyNoDevice()
              + " (mori4j.rdma.provider=auto uses real devices only; MORI4J_RDMA_PROVIDER=software runs the emulated device)");
        yield p;
      }
      default -> throw new TransportException(TransportError.INVALID_ARGS,
          "mori4j.rdma.provider (MORI4J_RDMA_PROVIDER) must be auto, ibverbs or software: '" + mode + "'");
    };
  }

  /** Whether libibverbs loads at all here (for {@code mori4j info}). */
  public static boolean ibverbsLoads() {
    return IbVerbs.available();
  }
}
