package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.Errno.ENODEV;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.rdma.verbs.VerbsDevice;
import org.mori4j.transport.rdma.verbs.VerbsProvider;

/**
 * The software verbs provider: an RDMA device in user-space Java, the analogue of the kernel's rxe (soft-RoCE),
 * for CI and machines without an RDMA NIC. It is an emulation and says so ({@link #emulated()} is true, its log
 * lines say "emulation"): it reproduces verbs semantics (queue-pair states, posting rules, keys and access
 * checks, completion order and statuses, RNR and retry behaviour, flushes) over TCP between devices, never NIC
 * performance or kernel bypass. It offers one device name, {@value #DEVICE_NAME}; each {@link #open} creates an
 * independent device listening on {@code bindHost} (loopback by default; the host must be a concrete IPv4
 * address, which goes into the device's GID). GPU memory regions need a {@link DeviceStaging}.
 */
public final class SoftwareVerbsProvider implements VerbsProvider {
  public static final String NAME = "software";
  public static final String DEVICE_NAME = "soft0";

  private final Inet4Address bindAddress;
  private final DeviceStaging staging;
  private final SoftSettings settings;

  /** Loopback (127.0.0.1), no GPU memory, default settings. */
  public SoftwareVerbsProvider() {
    this("127.0.0.1", null);
  }

  /** {@code staging} may be null: GPU memory registration then fails with {@code EOPNOTSUPP}. */
  public SoftwareVerbsProvider(String bindHost, DeviceStaging staging) {
    this(bindHost, staging, SoftSettings.defaults());
  }

  public SoftwareVerbsProvider(String bindHost, DeviceStaging staging, SoftSettings settings) {
    if (settings == null) throw new IllegalArgumentException("settings is null");
    this.bindAddress = resolve(bindHost);
    this.staging = staging;
    this.settings = settings;
  }

  private static Inet4Address resolve(String host) {
    if (host == null || host.isBlank()) throw new IllegalArgumentException("bindHost is empty");
    InetAddress a;
    try {
      a = InetAddress.getByName(host);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("bindHost " + host + " does not resolve", e);
    }
    if (!(a instanceof Inet4Address v4)) {
      throw new IllegalArgumentException("bindHost " + host + " is " + a.getHostAddress() + "; the software RDMA device needs an"
          + " IPv4 address, which its GID carries as ::ffff:a.b.c.d");
    }
    if (v4.isAnyLocalAddress()) {
      throw new IllegalArgumentException("bindHost " + host + " is the wildcard address; peers reach the device through the"
          + " address in its GID, so it must be a concrete IPv4 address");
    }
    return v4;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean emulated() {
    return true;
  }

  @Override
  public List<String> deviceNames() {
    return List.of(DEVICE_NAME);
  }

  @Override
  public String whyNoDevice() {
    return "";
  }

  @Override
  public VerbsDevice open(String deviceName) {
    if (!DEVICE_NAME.equals(deviceName)) {
      throw SoftErrors.error("ibv_open_device", ENODEV, "no software RDMA device named " + deviceName + "; the one device is " + DEVICE_NAME);
    }
    return SoftDevice.open(bindAddress, staging, settings);
  }

  @Override
  public String toString() {
    return "software verbs provider (emulation) on " + bindAddress.getHostAddress();
  }
}
