package org.mori4j.natives.verbs;

import java.util.List;
import org.mori4j.natives.NativeException;

/**
 * The entry point for finding RDMA devices: {@link #list()} never fails (a machine without libibverbs, without
 * kernel RDMA support or without a device has an empty list), and {@link #open} says "no RDMA device"
 * and why when there is nothing to open, so the engine can refuse the RDMA backend with a clear message.
 */
public final class RdmaDevices {
  /** The code name of the exception {@link #open} throws when there is no device. */
  public static final String NO_DEVICE = "NO_RDMA_DEVICE";

  /**
   * What one look at this machine found: the device names, and when there are none, why (libibverbs
   * missing, no RDMA support in the kernel, nothing listed, or the listing failed), in words fit for an
   * error message.
   */
  public record Inventory(List<String> devices, String whyNone) {
    public boolean isEmpty() {
      return devices.isEmpty();
    }
  }

  private RdmaDevices() {}

  /** The names of the RDMA devices on this machine; empty when there are none or they cannot be listed. */
  public static List<String> list() {
    return inventory().devices();
  }

  /** Lists the devices without ever throwing; {@link Inventory#whyNone} says why the list is empty. */
  public static Inventory inventory() {
    if (!IbVerbs.available()) {
      return new Inventory(List.of(), "libibverbs is not available (" + IbVerbs.absence() + ")");
    }
    try (VerbsDeviceList devices = VerbsDeviceList.open()) {
      return new Inventory(List.copyOf(devices.names()), devices.emptyReason());
    } catch (NativeException e) {
      // Listing failed for another reason than "no kernel support" (which is an empty list already).
      return new Inventory(List.of(), "libibverbs cannot list devices: " + e.getMessage());
    }
  }

  /** Opens the first device. */
  public static VerbsContext open() {
    return open(null);
  }

  /**
   * Opens the device called {@code name} (any device when null); a {@link NativeException} with code name
   * {@link #NO_DEVICE} when this machine has none (or not that one), saying what was found.
   */
  public static VerbsContext open(String name) {
    if (!IbVerbs.available()) {
      throw new NativeException(IbVerbs.LIBRARY, Errno.ENODEV, NO_DEVICE,
          "no RDMA device: libibverbs is not available (" + IbVerbs.absence() + ")");
    }
    try (VerbsDeviceList devices = listOrExplain()) {
      List<String> names = devices.names();
      int index = name == null ? (names.isEmpty() ? -1 : 0) : names.indexOf(name);
      if (index < 0) {
        throw new NativeException(IbVerbs.LIBRARY, Errno.ENODEV, NO_DEVICE, names.isEmpty()
            ? "no RDMA device on this machine: " + devices.emptyReason()
            : "no RDMA device named " + name + "; this machine has " + names);
      }
      return devices.openContext(index);
    }
  }

  private static VerbsDeviceList listOrExplain() {
    try {
      return VerbsDeviceList.open();
    } catch (NativeException e) {
      throw new NativeException(IbVerbs.LIBRARY, e.code(), NO_DEVICE,
          "no RDMA device: libibverbs cannot list devices: " + e.getMessage());
    }
  }
}
