package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;
import org.mori4j.transport.xgmi.XgmiBackend;

/**
 * A batch-of-batches call over XGMI with one entry per layer buffer (the KV-cache migration's shape: 160 entries, one
 * per registered region) on transport's in-memory two-GPU device: once the owner has confirmed the regions, the call
 * is one kernel launch ({@code mori4j.xgmi.fuse-batches = on}; off by default) and every entry lands byte-exact with its
 * own status; an entry the engine refuses (a block past its region) or the backend refuses (a forged descriptor) fails
 * alone with the message it gets today while the others land in that one launch; an entry to host memory goes over TCP
 * beside them; with the switch off (the default) the same call is one launch per entry, as before.
 */
class XgmiFusedBatchesOnTestDeviceTest {
  private static final String MODE = "xgmi-fused-test-device";
  private static final int ENTRIES = 160;
  private static final int BLOCKS = 8;
  private static final long BLOCK = 4096;
  /** Bytes of each entry's region (every other slot is used, shifted by a block on odd entries). */
  private static final long REGION = 2 * BLOCKS * BLOCK;
  /** Entries of the call with the switch off (fewer: 160 launches one by one only cost test time). */
  private static final int OFF_ENTRIES = 16;
  private static HostBackedGpuRuntime device;

  @BeforeAll
  static void useTheTestDevice() {
    device = TestGpuDevice.select(MODE, new HostBackedGpuRuntime(2, 20, true, HostBackedGpuRuntime.newDirectory()));
  }

  @AfterAll
  static void forgetTheTestDevice() {
    TestGpuDevice.forget(MODE, device);
  }

  /** Two engines of this process, a's regions on GPU 0, b's on GPU 1, one call's entries between them. */
  private record Pair(IoEngine a, IoEngine b, List<MemoryDesc> locals, List<MemoryDesc> remotes, MemorySegment src, MemorySegment dst) {}

  /** Engine {@code a} (new, key tagged {@code tag}) with {@code entries} regions over {@code src}, writing to {@code b}'s regions over {@code dst}. */
  private static Pair pair(String tag, IoEngine b, List<MemoryDesc> bRegions, DeviceBuffer src, DeviceBuffer dst, int entries) {
    IoEngine a = XgmiTransferTests.engine("fused-a-" + tag + "-" + ProcessHandle.current().pid());
    a.registerRemoteEngine(b.engineDesc());
    List<MemoryDesc> locals = new ArrayList<>();
    for (int e = 0; e < entries; e++) {
      locals.add(a.registerMemory(src.address() + e * REGION, REGION, 0, MemoryLocationType.GPU));
      if (bRegions.size() <= e) bRegions.add(b.registerMemory(dst.address() + e * REGION, REGION, 1, MemoryLocationType.GPU));
    }
    return new Pair(a, b, locals, bRegions.subList(0, entries), MemorySegment.ofAddress(src.address()).reinterpret(src.size()),
        MemorySegment.ofAddress(dst.address()).reinterpret(dst.size()));
  }

  /** Entry {@code e}'s blocks: every other slot, reversed locally (nothing joins); entry 2's first block is 100 bytes (the table then carries sizes). */
  private static long[][] blocks(int e) {
    long[] lo = new long[BLOCKS], ro = new long[BLOCKS], sizes = new long[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
      lo[i] = (long) (BLOCKS - 1 - i) * 2 * BLOCK;
      ro[i] = (long) i * 2 * BLOCK + (e % 2) * BLOCK;
      sizes[i] = e == 2 && i == 0 ? 100 : BLOCK;
    }
    return new long[][] {lo, ro, sizes};
  }

  /** Writes every entry (remotes replaced where {@code remotes} says) in one call; returns the statuses once all ended. */
  private static List<TransferStatus> writeAll(Pair p, List<MemoryDesc> remotes, int badEntry) {
    List<long[]> lo = new ArrayList<>(), ro = new ArrayList<>(), sizes = new ArrayList<>();
    int n = p.locals().size();
    long[] uids = new long[n];
    for (int e = 0; e < n; e++) {
      long[][] b = blocks(e);
      if (e == badEntry) b[1][BLOCKS - 1] = REGION - 100; // past the region's end
      lo.add(b[0]);
      ro.add(b[1]);
      sizes.add(b[2]);
      uids[e] = p.a().allocateTransferUid();
    }
    List<TransferStatus> st = p.a().batchWrite(p.locals(), lo, remotes, ro, sizes, uids);
    for (TransferStatus s : st) assertTrue(s.await(java.time.Duration.ofSeconds(60)), "no answer within 60 s");
    return st;
  }

  private static void fill(Pair p, long seed) {
    for (long i = 0; i < p.src().byteSize(); i += 8) p.src().set(ValueLayout.JAVA_LONG, i, seed * 1_000_003L + i);
    p.dst().fill((byte) 0);
  }

  /** Entry {@code e}'s remote region holds exactly its blocks (or nothing, {@code landed} false). */
  private static void assertEntry(Pair p, MemorySegment dst, int e, boolean landed) {
    MemorySegment want = Arena.ofAuto().allocate(REGION);
    if (landed) {
      long[][] b = blocks(e);
      for (int i = 0; i < BLOCKS; i++) MemorySegment.copy(p.src(), e * REGION + b[0][i], want, b[1][i], b[2][i]);
    }
    long bad = dst.asSlice(dst == p.dst() ? e * REGION : 0, REGION).mismatch(want);
    assertEquals(-1, bad, "entry " + e + (landed ? "" : " (failed: nothing may land)") + ": first wrong byte");
  }

  @Test
  void aCallOf160EntriesIsOneLaunchABadEntryFailsAloneAndWithTheSwitchOffEachEntryIsALaunch() {
    long cap = ENTRIES * REGION;
    String pid = String.valueOf(ProcessHandle.current().pid());
    try (Arena arena = Arena.ofShared(); DeviceBuffer src = device.allocDevice(0, cap); DeviceBuffer dst = device.allocDevice(1, cap);
         IoEngine b = XgmiTransferTests.engine("fused-b-" + pid)) {
      List<MemoryDesc> bRegions = new ArrayList<>();
      // an initiator started with the switch on (off by default)
      System.setProperty("mori4j.xgmi.fuse-batches", "on");
      ConfigFactory.invalidateCaches();
      Pair p;
      try {
        p = pair("on", b, bRegions, src, dst, ENTRIES);
      } finally {
        System.clearProperty("mori4j.xgmi.fuse-batches");
        ConfigFactory.invalidateCaches();
      }
      try (IoEngine a = p.a()) {
        fill(p, 1);
        for (TransferStatus s : writeAll(p, p.remotes(), -1)) assertEquals(StatusCode.SUCCESS, s.code(), s.message());
        // the owner has confirmed every region now: the same call is one launch
        fill(p, 2);
        long launches = XgmiBackend.batchLaunchesInProcess(), metered = a.metrics().getXgmiKernelLaunches();
        List<TransferStatus> st = writeAll(p, p.remotes(), -1);
        for (int e = 0; e < ENTRIES; e++) {
          assertEquals(StatusCode.SUCCESS, st.get(e).code(), "entry " + e + ": " + st.get(e).message());
          assertEntry(p, p.dst(), e, true);
        }
        assertEquals(1, XgmiBackend.batchLaunchesInProcess() - launches, "kernel launches for 160 entries between two devices");
        assertEquals(1, a.metrics().getXgmiKernelLaunches() - metered, "the engine's launch count");

        // entry 5 refused by the engine, entry 9 forged (its address) refused by the backend, entry 11 to host memory
        MemorySegment host = arena.allocate(REGION, 4096);
        List<MemoryDesc> remotes = new ArrayList<>(p.remotes());
        MemoryDesc r9 = remotes.get(9);
        remotes.set(9, new MemoryDesc(r9.engineKey(), r9.id(), r9.deviceId(), r9.address() + 4096, r9.size(), r9.location(), r9.accessKey(),
            r9.backendData(), r9.ownerIncarnation()));
        remotes.set(11, b.registerMemory(host));
        fill(p, 3);
        launches = XgmiBackend.batchLaunchesInProcess();
        st = writeAll(p, remotes, 5);
        assertEquals(StatusCode.ERR_INVALID_ARGS, st.get(5).code(), st.get(5).message());
        assertTrue(st.get(5).message().startsWith("remoteOffsets[7] " + (REGION - 100) + " + size 4096 exceeds remoteDst size"), st.get(5).message());
        assertEquals(StatusCode.ERR_INVALID_ARGS, st.get(9).code(), st.get(9).message());
        assertTrue(st.get(9).message().contains("forged or stale descriptor"), st.get(9).message());
        for (int e = 0; e < ENTRIES; e++) {
          if (e == 5 || e == 9) {
            assertEntry(p, p.dst(), e, false);
          } else if (e == 11) {
            assertEquals(StatusCode.SUCCESS, st.get(e).code(), st.get(e).message());
            assertEntry(p, host, e, true);
            assertEntry(p, p.dst(), e, false);
          } else {
            assertEquals(StatusCode.SUCCESS, st.get(e).code(), "entry " + e + ": " + st.get(e).message());
            assertEntry(p, p.dst(), e, true);
          }
        }
        assertEquals(1, XgmiBackend.batchLaunchesInProcess() - launches, "the 157 good XGMI entries are one launch");
      }

      // an initiator with the default (off): the old launch count, one per entry
      Pair off = pair("off", b, bRegions, src, dst, OFF_ENTRIES);
      try (IoEngine a = off.a()) {
        fill(off, 4);
        writeAll(off, off.remotes(), -1);
        fill(off, 5);
        long launches = XgmiBackend.batchLaunchesInProcess();
        List<TransferStatus> st = writeAll(off, off.remotes(), -1);
        for (int e = 0; e < OFF_ENTRIES; e++) {
          assertEquals(StatusCode.SUCCESS, st.get(e).code(), "entry " + e + ": " + st.get(e).message());
          assertEntry(off, off.dst(), e, true);
        }
        assertEquals(OFF_ENTRIES, XgmiBackend.batchLaunchesInProcess() - launches, "one launch per entry with fuse-batches off (the default)");
      }
    }
  }
}
