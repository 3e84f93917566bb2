package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class XgmiHostTest {
  @Test
  void thisProcessIsReadFromProc() {
    XgmiHost me = XgmiHost.local();
    assertFalse(me.bootId().isEmpty(), "boot id from /proc/sys/kernel/random/boot_id");
    assertTrue(me.pidNamespace().startsWith("pid:["), me.pidNamespace());
    assertEquals(ProcessHandle.current().pid(), me.pid());
    assertTrue(me.sameProcess(me) && me.sameHost(me));
    assertSame(me, XgmiHost.local());
  }

  @Test
  void roundTripsThroughBytes() {
    XgmiHost h = new XgmiHost("b00t", "gpu-node-7", "pid:[4026531836]", 4242, -99);
    assertEquals(h, XgmiHost.decode(h.encode()));
  }

  @Test
  void hostAndProcessAreToldApart() {
    XgmiHost a = new XgmiHost("boot-1", "n", "pid:[1]", 10, 1);
    assertTrue(a.sameHost(new XgmiHost("boot-1", "renamed", "pid:[1]", 11, 2)), "the host name does not decide");
    assertFalse(a.sameProcess(new XgmiHost("boot-1", "n", "pid:[1]", 10, 2)), "same pid, another JVM (nonce)");
    assertFalse(a.sameHost(new XgmiHost("boot-2", "n", "pid:[1]", 10, 1)), "another boot: another machine");
    assertFalse(a.sameHost(new XgmiHost("boot-1", "n", "pid:[2]", 10, 1)), "another PID namespace: IPC handles do not open");
    XgmiHost unknown = new XgmiHost("", "n", "pid:[1]", 10, 1);
    assertFalse(unknown.sameHost(unknown), "without a boot id nothing is known to be local");
    assertFalse(a.sameHost(null));
  }

  @Test
  void malformedBytesAreRefused() {
    byte[] good = XgmiHost.local().encode();
    assertThrows(IllegalArgumentException.class, () -> XgmiHost.decode(null));
    assertThrows(IllegalArgumentException.class, () -> XgmiHost.decode(new byte[0]));
    assertThrows(IllegalArgumentException.class, () -> XgmiHost.decode(Arrays.copyOf(good, good.length - 1)));
    assertThrows(IllegalArgumentException.class, () -> XgmiHost.decode(Arrays.copyOf(good, good.length + 1)));
    byte[] version = good.clone();
    version[0] = 2;
    assertThrows(IllegalArgumentException.class, () -> XgmiHost.decode(version));
    byte[] longString = good.clone();
    longString[1] = (byte) 0xff; // a string length far beyond what follows
    assertThrows(IllegalArgumentException.class, () -> XgmiHost.decode(longString));
  }
}
