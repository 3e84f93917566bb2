package org.mori4j.natives.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;

/**
 * Device discovery on a machine with libibverbs but no RDMA device (every development and CI machine of
 * this project): the list is empty and opening says "no RDMA device". Real downcalls that need no device
 * run too. Skipped, visibly, on a machine that does have a device.
 */
class RdmaDevicesTest {

  private static void assumeNoDevice() {
    Assumptions.assumeTrue(IbVerbs.available(), "libibverbs.so.1 is not installed: " + IbVerbs.absence());
    List<String> devices = RdmaDevices.list();
    Assumptions.assumeTrue(devices.isEmpty(), "this machine has RDMA devices " + devices);
  }

  @Test
  void withoutADeviceTheListIsEmpty() {
    assumeNoDevice();
    assertEquals(List.of(), RdmaDevices.list());
  }

  @Test
  void openingWithoutADeviceSaysNoRdmaDevice() {
    assumeNoDevice();
    NativeException e = assertThrows(NativeException.class, RdmaDevices::open);
    assertEquals(RdmaDevices.NO_DEVICE, e.codeName());
    assertEquals(IbVerbs.LIBRARY, e.library());
    assertTrue(e.getMessage().startsWith("no RDMA device"), e.getMessage());
    System.out.println("RdmaDevices.open() here: " + e.getMessage());
  }

  @Test
  void openingANamedDeviceThatIsNotThereSaysNoRdmaDevice() {
    assumeNoDevice();
    NativeException e = assertThrows(NativeException.class, () -> RdmaDevices.open("mlx5_0"));
    assertEquals(RdmaDevices.NO_DEVICE, e.codeName());
    assertTrue(e.getMessage().contains("no RDMA device"), e.getMessage());
  }

  @Test
  void aClosedDeviceListRefusesUse() {
    assumeNoDevice();
    VerbsDeviceList list = VerbsDeviceList.open();
    assertEquals(0, list.size());
    assertFalse(list.emptyReason().isEmpty());
    assertTrue(list.isOpen());
    list.close();
    list.close(); // idempotent
    assertFalse(list.isOpen());
    IllegalStateException e = assertThrows(IllegalStateException.class, list::handle);
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
    assertTrue(list.toString().contains("closed"), list.toString());
  }

  @Test
  void workCompletionStatusesAreNamedByTheLibrary() {
    Assumptions.assumeTrue(IbVerbs.available(), IbVerbs.absence());
    assertEquals("success", IbVerbs.wcStatusStr(VerbsConstants.IBV_WC_SUCCESS));
    assertEquals("remote access error", IbVerbs.wcStatusStr(VerbsConstants.IBV_WC_REM_ACCESS_ERR));
    assertEquals("transport retry counter exceeded", IbVerbs.wcStatusStr(VerbsConstants.IBV_WC_RETRY_EXC_ERR));
  }

  @Test
  void errnoIsNamedAndDescribed() {
    assertEquals("ENODEV", Errno.name(Errno.ENODEV));
    assertEquals("No such device", Errno.describe(Errno.ENODEV));
    assertEquals("errno 4242", Errno.name(4242));
    NativeException e = IbVerbs.failure("ibv_modify_qp", Errno.EINVAL);
    assertEquals(Errno.EINVAL, e.code());
    assertEquals("EINVAL", e.codeName());
    assertEquals("ibv_modify_qp failed: EINVAL (Invalid argument)", e.getMessage());
  }
}
