package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.verbs.RdmaDevices;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;
import org.mori4j.transport.rdma.soft.SoftwareVerbsProvider;

/**
 * {@code mori4j info} runs on any machine and says why where something is missing: on one without an RDMA
 * device it prints the inventory's reason and that auto chooses no provider; without a GPU runtime, the
 * runtime's reason; TCP always starts. Each branch is checked against what this machine actually has, so the
 * test holds on a GPU or NIC machine too. The device lines are checked on the software provider's device,
 * the only one every machine has.
 */
class InfoCommandTest {
  @Test
  void printsThisHostsViewWithTheReasons() {
    String out = CommandRun.ok("info");
    RdmaDevices.Inventory inv = RdmaDevices.inventory();
    assertTrue(out.contains("libibverbs: "), out);
    if (inv.isEmpty()) {
      assertTrue(out.contains("devices: none: " + inv.whyNone()), out);
      assertTrue(out.contains("auto would choose: no provider: createBackend(RDMA) fails with \"no RDMA device on this machine: " + inv.whyNone()), out);
      assertTrue(out.contains("rdma: with auto or ibverbs: no, no RDMA device on this machine"), out);
    } else {
      assertTrue(out.contains("auto would choose: ibverbs"), out);
      for (String d : inv.devices()) assertTrue(out.contains(d), out);
    }
    assertTrue(out.contains("with software: yes, when named (emulation)"), out);
    assertTrue(out.contains("tcp:  yes (always)"), out);
    GpuRuntime gpu = BenchGpu.runtime();
    if (!gpu.available()) {
      assertTrue(out.contains("no GPU runtime: " + gpu.version()), out);
      assertTrue(out.contains("xgmi: no: no GPU runtime"), out);
    } else {
      assertTrue(out.contains("runtime: " + gpu.name()), out);
      assertFalse(out.contains("no GPU runtime"), out);
    }
  }

  @Test
  void aDeviceIsPrintedWithItsPorts() {
    String d = InfoCommand.device(new SoftwareVerbsProvider(), SoftwareVerbsProvider.DEVICE_NAME);
    assertTrue(d.startsWith("    " + SoftwareVerbsProvider.DEVICE_NAME + ": 1 port(s), max_qp_wr "), d);
    assertTrue(d.contains("      port 1: ACTIVE"), d);
    assertTrue(d.matches("(?s).*GID\\[0] [0-9a-f]{4}(:[0-9a-f]{4}){7}\\n"), d);
    String missing = InfoCommand.device(new SoftwareVerbsProvider(), "mlx5_9");
    assertTrue(missing.startsWith("    mlx5_9: cannot be opened: "), missing);
  }

  @Test
  void withDevicesAutoChoosesIbverbsAndAppliesTheSelection() {
    RdmaDevices.Inventory two = new RdmaDevices.Inventory(List.of("mlx5_0", "mlx5_1"), "");
    String auto = InfoCommand.autoChoice(mode -> new ListedVerbsProvider("ibverbs", two.devices()));
    assertEquals("ibverbs, because it lists [mlx5_0, mlx5_1]", auto);
    String r = InfoCommand.rdma(new ListedVerbsProvider("ibverbs", two.devices()), two, true, "", "auto", "^mlx5_1", auto);
    assertTrue(r.contains("devices: mlx5_0, mlx5_1"), r);
    assertTrue(r.contains("    mlx5_0: cannot be opened: this test opens no device"), r);
    assertTrue(r.contains("'^mlx5_1' -> [mlx5_0]"), r);
    assertTrue(r.contains("auto would choose: ibverbs, because it lists [mlx5_0, mlx5_1]"), r);
    assertTrue(InfoCommand.rdma(new ListedVerbsProvider("ibverbs", two.devices()), two, true, "", "auto", "mlx5_7", auto).contains("-> refused: "), r);
    String none = InfoCommand.autoChoice(mode -> {
      throw new TransportException(TransportError.RDMA_OP, "no RDMA device on this machine: libibverbs lists none");
    });
    assertEquals("no provider: createBackend(RDMA) fails with \"no RDMA device on this machine: libibverbs lists none\"; "
        + "auto never falls back to the software provider", none);
  }
}
