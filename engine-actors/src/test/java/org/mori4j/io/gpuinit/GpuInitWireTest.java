package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.io.NotSerializableException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.Test;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;

/**
 * What crosses process boundaries: the handle and region records round-trip and refuse garbage; every
 * {@link GpuInitProtocol.Wire} message goes through the serializer bound in reference.conf (id 4244) and back, and
 * truncated or extended frames are refused whole. And the layout's own consistency: fields inside their struct,
 * none overlapping, counters the device writes on other 64-byte lines than those the proxy writes.
 */
class GpuInitWireTest {
  private static final MemoryDesc DESC = new MemoryDesc("engine-x", 7, -1, 0x1000, 4096, MemoryLocationType.CPU, 99, Map.of(), 5);

  @Test
  void recordsRoundTripAndRefuseGarbage() {
    EndpointHandle h = new EndpointHandle("engine-x", 42, "pekko://mori4j@127.0.0.1:2552/system/ctx#1", 3);
    assertEquals(h, EndpointHandle.fromBytes(h.toBytes()));
    RdmaMemoryRegion r = new RdmaMemoryRegion(0x1000, 4096, 0x100, 0x101, ACCESS_ALL, DESC);
    RdmaMemoryRegion back = RdmaMemoryRegion.fromBytes(r.toBytes());
    assertEquals(r.address(), back.address());
    assertEquals(r.rkey(), back.rkey());
    assertEquals(r.desc(), back.desc());
    byte[] hb = h.toBytes(), rb = r.toBytes();
    for (int cut = 0; cut < hb.length; cut += 3) {
      int n = cut;
      assertThrows(IllegalArgumentException.class, () -> EndpointHandle.fromBytes(java.util.Arrays.copyOf(hb, n)), "truncated at " + n);
    }
    for (int cut = 0; cut < rb.length; cut += 7) {
      int n = cut;
      assertThrows(IllegalArgumentException.class, () -> RdmaMemoryRegion.fromBytes(java.util.Arrays.copyOf(rb, n)), "truncated at " + n);
    }
    assertThrows(IllegalArgumentException.class, () -> new RdmaEndpointConfig(false, -1, 100, 256, 0));
    assertThrows(IllegalArgumentException.class, () -> new RdmaEndpointConfig(false, -1, 64, 64, 16), "cq smaller than sq + rq");
    assertThrows(IllegalArgumentException.class, () -> new RdmaEndpointConfig(true, -1, 64, 128, 0));
  }

  @Test
  void everyWireMessageRoundTripsThroughTheBoundSerializer() throws Exception {
    try (IoEngine e = IoEngine.create("gpuinit-wire-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      ExtendedActorSystem sys = (ExtendedActorSystem) Adapter.toClassic(e.actorSystem());
      var ser = SerializationExtension.get(sys);
      ActorRef<GpuInitProtocol.Command> ref = Adapter.toTyped(sys.deadLetters());
      byte[] payload = new byte[MAX_SEND_BYTES];
      new SplittableRandom(1).nextBytes(payload);
      List<GpuInitProtocol.Wire> msgs = List.of(
          new GpuInitProtocol.LookupRkey(0x101, 9, ref),
          new GpuInitProtocol.RkeyAnswer(9, 0x101, true, 0x1000, 4096, ACCESS_ALL, DESC.toBytes()),
          new GpuInitProtocol.RkeyAnswer(9, 0x101, false, 0, 0, 0, new byte[0]),
          new GpuInitProtocol.Probe(3, Adapter.toTyped(sys.deadLetters()), ref),
          new GpuInitProtocol.Closing(ref),
          new GpuInitProtocol.Ping(77, ref),
          new GpuInitProtocol.Pong(77),
          new GpuInitProtocol.ProbeAnswer(3, true, DESC.toBytes(), ""),
          new GpuInitProtocol.PeerOp(OP_SEND, 1, 2, 1L << 40, 0, 0, 0, 0, 0, payload.length, payload, ref),
          new GpuInitProtocol.PeerOp(OP_ATOMIC_CMP_AND_SWP, 1, 2, 5, 0x1008, 0x101, -1, Long.MIN_VALUE, 0, 8, new byte[0], ref),
          new GpuInitProtocol.PeerOpResult(1, 5, WC_REM_ACCESS_ERR, -7, "why"));
      for (GpuInitProtocol.Wire m : msgs) {
        var s = ser.findSerializerFor(m);
        assertEquals(4244, s.identifier(), "bound in reference.conf: " + m.getClass().getSimpleName());
        byte[] bytes = ser.serialize(m).get();
        String manifest = org.apache.pekko.serialization.Serializers.manifestFor(s, m);
        Object back = ser.deserialize(bytes, s.identifier(), manifest).get();
        assertEquals(m.getClass(), back.getClass());
        assertEquals(describe(m), describe(back), m.getClass().getSimpleName());
        var g = (GpuInitMessageSerializer) s;
        assertThrows(NotSerializableException.class, () -> g.fromBinary(java.util.Arrays.copyOf(bytes, bytes.length - 1), manifest));
        assertThrows(NotSerializableException.class, () -> g.fromBinary(java.util.Arrays.copyOf(bytes, bytes.length + 1), manifest));
      }
      assertThrows(NotSerializableException.class, () -> ((GpuInitMessageSerializer) ser.findSerializerFor(msgs.get(0))).fromBinary(new byte[4], "zz"));
    }
  }

  /** Records with array components compare arrays by identity: compare their text with arrays spelled out. */
  private static String describe(Object o) {
    StringBuilder b = new StringBuilder(o.getClass().getSimpleName());
    for (var c : o.getClass().getRecordComponents()) {
      try {
        Object v = c.getAccessor().invoke(o);
        b.append(' ').append(c.getName()).append('=').append(v instanceof byte[] a ? java.util.Arrays.hashCode(a) + "/" + a.length
            : v instanceof ActorRef<?> r ? r.path().toString() : String.valueOf(v));
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
    }
    return b.toString();
  }

  @Test
  void theLayoutIsConsistent() {
    Map<String, Long> c = cNames();
    record Field(String name, long off, long size) {}
    Map<String, Integer> sizes = Map.of("MoriRdmaEndpoint", CTRL_BYTES, "MoriRdmaWqe", WQE_BYTES, "MoriRdmaCqe", CQE_BYTES, "MoriRdmaRecvWqe", RECV_WQE_BYTES);
    Set<String> eight = Set.of("wrId", "localAddr", "remoteAddr", "compareAdd", "swap", "addr", "sqRing", "cqRing", "rqRing", "atomicResults",
        "sqPostIdx", "waitTimeoutNs", "sqDbrRecord", "sqDoorbell", "cqDbrRecord", "cqPollIdx", "sqRetired", "cqProducerIdx", "firstErrorWrId",
        "rqPostIdx", "rqDbrRecord", "rqRetired");
    Set<String> one = Set.of("MoriRdmaWqe.opcode", "MoriRdmaWqe.flags", "MoriRdmaCqe.opcode", "MoriRdmaCqe.flags");
    for (var s : sizes.entrySet()) {
      List<Field> fs = new ArrayList<>();
      c.forEach((k, v) -> {
        if (k.startsWith("offsetof(" + s.getKey() + ", ")) {
          String f = k.substring(("offsetof(" + s.getKey() + ", ").length(), k.length() - 1);
          long size = one.contains(s.getKey() + "." + f) ? 1 : eight.contains(f) ? 8 : 4;
          assertEquals(0, v % size, s.getKey() + "." + f + " naturally aligned");
          fs.add(new Field(f, v, size));
        }
      });
      fs.sort(java.util.Comparator.comparingLong(Field::off));
      for (int i = 0; i < fs.size(); i++) {
        Field f = fs.get(i);
        assertTrue(f.off() + f.size() <= s.getValue(), s.getKey() + "." + f.name() + " inside the struct");
        if (i > 0) assertTrue(fs.get(i - 1).off() + fs.get(i - 1).size() <= f.off(), s.getKey() + ": " + fs.get(i - 1).name() + " overlaps " + f.name());
      }
    }
    // device-written and proxy-written counters never share a 64-byte line
    int[] device = {CTRL_SQ_POST_IDX, CTRL_SQ_DBR_RECORD, CTRL_SQ_DOORBELL, CTRL_CQ_DBR_RECORD, CTRL_CQ_POLL_IDX, CTRL_RQ_POST_IDX, CTRL_RQ_DBR_RECORD};
    int[] proxy = {CTRL_SQ_RETIRED, CTRL_CQ_PRODUCER_IDX, CTRL_ERROR_COUNT, CTRL_FIRST_ERROR_STATUS, CTRL_FIRST_ERROR_WR_ID, CTRL_STATE, CTRL_RQ_RETIRED};
    for (int d : device) for (int p : proxy) assertNotEquals(d / 64, p / 64, "device field at " + d + " shares a line with proxy field at " + p);
    assertEquals(CTRL_BYTES + 8L * WQE_BYTES + 32L * CQE_BYTES + 4L * RECV_WQE_BYTES + 8L * 8, blockBytes(8, 32, 4));
    assertEquals(0x5045524D, MAGIC);
    assertEquals("MREP", new String(java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(MAGIC).array(),
        java.nio.charset.StandardCharsets.US_ASCII));
  }
}
