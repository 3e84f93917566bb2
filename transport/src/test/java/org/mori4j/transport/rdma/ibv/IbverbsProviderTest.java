package org.mori4j.transport.rdma.ibv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.natives.verbs.IbVerbs;
import org.mori4j.natives.verbs.RdmaDevices;

/**
 * The ibverbs provider on a machine without an RDMA device (every machine of this project): it lists none,
 * says why in the inventory's words, and opening any device (and so creating anything on it) fails with
 * "no RDMA device on this machine: " and that reason, the message the engine gives when it refuses an RDMA
 * backend. Skipped, visibly, where a device exists.
 */
class IbverbsProviderTest {
  private final IbverbsProvider provider = new IbverbsProvider();

  private static RdmaDevices.Inventory assumeNoDevice() {
    RdmaDevices.Inventory inventory = RdmaDevices.inventory();
    Assumptions.assumeTrue(inventory.isEmpty(), "this machine has RDMA devices " + inventory.devices());
    return inventory;
  }

  @Test
  void isTheRealNicProvider() {
    assertEquals("ibverbs", provider.name());
    assertFalse(provider.emulated());
  }

  @Test
  void listsNoDeviceAndSaysWhy() {
    RdmaDevices.Inventory inventory = assumeNoDevice();
    assertEquals(List.of(), provider.deviceNames());
    String why = provider.whyNoDevice();
    assertFalse(why.isBlank(), "whyNoDevice must say why");
    assertEquals(inventory.whyNone(), why);
    if (IbVerbs.available()) {
      // With libibverbs but no kernel RDMA support (no ib_uverbs), the listing fails with ENOSYS.
      assertTrue(why.startsWith("the kernel has no RDMA support") || why.equals("libibverbs lists none"), why);
    }
    System.out.println("ibverbs provider here: " + why);
  }

  @Test
  void openingAnyDeviceFailsWithTheNoDeviceMessage() {
    RdmaDevices.Inventory inventory = assumeNoDevice();
    for (String name : new String[] {"mlx5_0", null}) {
      NativeException e = assertThrows(NativeException.class, () -> provider.open(name));
      assertEquals("no RDMA device on this machine: " + inventory.whyNone(), e.getMessage());
      assertEquals(RdmaDevices.NO_DEVICE, e.codeName());
      assertEquals(Errno.ENODEV, e.code());
      assertEquals(IbVerbs.LIBRARY, e.library());
      assertEquals("ibv_open_device", e.function());
    }
  }

  @Test
  void aNameThatIsNotThereIsNamedWithTheDevicesThatAre() {
    List<String> devices = provider.deviceNames();
    Assumptions.assumeFalse(devices.isEmpty(), "needs an RDMA device: " + provider.whyNoDevice());
    NativeException e = assertThrows(NativeException.class, () -> provider.open("no_such_nic0"));
    assertEquals("no RDMA device named 'no_such_nic0'; this machine has " + devices, e.getMessage());
    assertEquals(RdmaDevices.NO_DEVICE, e.codeName());
  }
}
