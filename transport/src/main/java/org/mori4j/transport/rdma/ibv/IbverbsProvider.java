package org.mori4j.transport.rdma.ibv;

import java.util.List;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.natives.verbs.IbVerbs;
import org.mori4j.natives.verbs.RdmaDevices;
import org.mori4j.natives.verbs.VerbsContext;
import org.mori4j.transport.rdma.verbs.VerbsDevice;
import org.mori4j.transport.rdma.verbs.VerbsProvider;

/**
 * The {@code ibverbs} provider: real RDMA NICs through libibverbs, over the FFM bindings of
 * {@code org.mori4j.natives.verbs}. Devices are what {@link RdmaDevices#inventory()} finds; each handle it
 * returns owns one native object ({@code ibv_context}, {@code ibv_pd}, {@code ibv_mr}, {@code ibv_cq},
 * {@code ibv_comp_channel}, {@code ibv_qp}) and frees it on close. Posting and polling copy between the
 * Java flyweights ({@code SendRequests}, {@code ReceiveRequests}, {@code Completions}) and native arrays each
 * queue pair and completion queue keeps, so the data path allocates nothing and holds no lock across a
 * native call. On a machine without a device every {@link #open} fails with "no RDMA device on this
 * machine: " and the inventory's reason, the words the engine uses to refuse an RDMA backend.
 */
public final class IbverbsProvider implements VerbsProvider {
  /** This provider's {@link #name()}. */
  public static final String NAME = "ibverbs";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean emulated() {
    return false;
  }

  @Override
  public List<String> deviceNames() {
    return RdmaDevices.inventory().devices();
  }

  @Override
  public String whyNoDevice() {
    RdmaDevices.Inventory inventory = RdmaDevices.inventory();
    return inventory.isEmpty() ? inventory.whyNone() : "";
  }

  /**
   * Opens {@code deviceName} (null: the first device listed). Fails with a {@link NativeException}
   * ({@code ENODEV}, code name {@link RdmaDevices#NO_DEVICE}) naming what exists when there is no such device.
   */
  @Override
  public VerbsDevice open(String deviceName) {
    RdmaDevices.Inventory inventory = RdmaDevices.inventory();
    if (inventory.isEmpty()) throw noDevice("no RDMA device on this machine: " + inventory.whyNone());
    if (deviceName != null && !inventory.devices().contains(deviceName)) {
      throw noDevice("no RDMA device named '" + deviceName + "'; this machine has " + inventory.devices());
    }
    VerbsContext context = RdmaDevices.open(deviceName);
    try {
      return new IbvDevice(context);
    } catch (RuntimeException e) {
      context.close();
      throw e;
    }
  }

  private static NativeException noDevice(String message) {
    return new NativeException(IbVerbs.LIBRARY, "ibv_open_device", Errno.ENODEV, RdmaDevices.NO_DEVICE, message);
  }
}
