package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;

/** The XGMI backend's behaviour that needs no GPU: refusal without a runtime, the same-host handshake. */
class XgmiBackendNoGpuTest {
  private static XgmiBackend backend(GpuRuntime gpu) {
    return new XgmiBackend("a", XgmiSettings.of(4, 4), () -> gpu, (peer, id, key, answer) -> answer.refused(TransportError.NOT_FOUND, "none"));
  }

  @Test
  void startWithoutAGpuRuntimeSaysWhy() {
    GpuRuntime gpu = GpuRuntimes.select("auto");
    assumeFalse(gpu.available(), "this machine has a GPU runtime");
    XgmiBackend b = backend(gpu);
    TransportException e = assertThrows(TransportException.class, () -> b.start(BackendListener.NONE));
    assertEquals(TransportError.GPU_OP, e.error());
    assertTrue(e.getMessage().contains("needs a GPU runtime") && e.getMessage().contains("tried"), e.getMessage());
    assertEquals(List.of(), b.completionSources());
    assertFalse(b.connected("b"));
    b.close();
  }

  @Test
  void reachesOnlyEnginesOfThisHost() {
    XgmiBackend b = backend(GpuRuntimes.select("auto"));
    XgmiHost me = XgmiHost.local();
    assertTrue(b.reaches(b.engineData()));
    assertTrue(b.reaches(new XgmiHost(me.bootId(), me.hostName(), me.pidNamespace(), me.pid() + 1, 5).encode()), "another process here");
    assertFalse(b.reaches(new XgmiHost("other-boot", me.hostName(), me.pidNamespace(), 1, 1).encode()), "another machine");
    assertFalse(b.reaches(null));
    assertFalse(b.reaches(new byte[] {1, 2, 3}));
  }

  @Test
  void handshakeFromAnotherHostOrUnderAnotherNameIsRefused() {
    XgmiBackend target = backend(GpuRuntimes.select("auto"));
    XgmiBackend initiator = backend(GpuRuntimes.select("auto"));
    byte[] request = initiator.handshakeRequest("t");
    assertNotNull(XgmiHost.decode(target.acceptHandshake("a", request)), "same host: answered with the target's identity");

    TransportException renamed = assertThrows(TransportException.class, () -> target.acceptHandshake("mallory", request));
    assertTrue(renamed.getMessage().contains("'a'") && renamed.getMessage().contains("mallory"), renamed.getMessage());

    byte[] key = "x".getBytes(StandardCharsets.UTF_8);
    byte[] far = new XgmiHost("other-boot", "far", "pid:[1]", 1, 1).encode();
    byte[] remote = ByteBuffer.allocate(2 + key.length + far.length).putShort((short) key.length).put(key).put(far).array();
    TransportException elsewhere = assertThrows(TransportException.class, () -> target.acceptHandshake("x", remote));
    assertEquals(TransportError.INVALID_ARGS, elsewhere.error());
    assertTrue(elsewhere.getMessage().contains("not on this host"), elsewhere.getMessage());

    assertThrows(TransportException.class, () -> target.acceptHandshake("a", new byte[] {0, 9, 1}));
  }
}
