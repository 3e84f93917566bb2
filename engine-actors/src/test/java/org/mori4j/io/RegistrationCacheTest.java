package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Bulk registration and the range cache, on TCP and on RDMA (software provider): a bulk call registers many
 * regions at once (all or none, naming the index it refuses), a region inside a registered one is a view that
 * costs no backend registration ({@link RegistrationStats#backendRegistrations()} does not move; the RDMA
 * backend's sharing of memory regions is counted in transport's RdmaBackendTest), a view moves bytes like any
 * region and outlives its parent, and bulk deregistration is all or none too.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RegistrationCacheTest {
  private static final long MIB = 1 << 20;
  private ActorSystem<Void> system;
  private final Arena arena = Arena.ofShared();

  @BeforeAll
  void start() {
    system = ActorSystem.create(Behaviors.empty(), "registration-cache",
        ConfigFactory.parseString("mori4j.rdma.provider = software").withFallback(ConfigFactory.load()));
  }

  @AfterAll
  void stop() {
    system.terminate();
    arena.close();
  }

  private IoEngine engine(String name, BackendType type) {
    IoEngine e = IoEngine.create(system, "regcache-" + name + "-" + type + "-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
    e.createBackend(type, type == BackendType.RDMA ? RdmaBackendConfig.defaults() : TcpBackendConfig.defaults());
    return e;
  }

  private static void fill(MemorySegment s, long seed) {
    java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
    for (long i = 0; i + 8 <= s.byteSize(); i += 8) s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
  }

  private static void ok(TransferStatus s) {
    assertTrue(s.await(Duration.ofSeconds(10)), "transfer did not finish");
    assertEquals(StatusCode.SUCCESS, s.code(), s.message());
  }

  @ParameterizedTest
  @EnumSource(value = BackendType.class, names = {"TCP", "RDMA"})
  void bulkRegistrationAndViewsServedFromTheCache(BackendType type) {
    try (IoEngine a = engine("a", type); IoEngine b = engine("b", type)) {
      RegistrationStats st = a.registrationStats();
      MemorySegment remoteMem = arena.allocate(MIB, 4096);
      MemoryDesc remote = b.registerMemory(remoteMem);
      a.registerRemoteEngine(b.engineDesc());

      // 200 separate allocations in one call: 200 descriptors in order, one backend registration each
      List<MemorySegment> segs = new ArrayList<>();
      List<MemoryRegistration> regs = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        segs.add(arena.allocate(4096, 4096));
        regs.add(MemoryRegistration.host(segs.get(i)));
      }
      List<MemoryDesc> many = a.registerMemories(regs);
      assertEquals(200, many.size());
      Set<Long> ids = new HashSet<>();
      for (int i = 0; i < 200; i++) {
        assertEquals(segs.get(i).address(), many.get(i).address());
        assertEquals(4096, many.get(i).size());
        ids.add(many.get(i).id());
      }
      assertEquals(200, ids.size(), "every region has its own id");
      assertEquals(200, st.regions());
      assertEquals(1, st.calls());
      assertEquals(200, st.backendRegistrations());
      assertEquals(0, st.viewsFromCache());
      assertTrue(st.totalNanos() > 0 && st.nanosPerRegion() > 0, st.toString());
      ok(a.write(many.get(199), 0, remote, 0, 4096, a.allocateTransferUid()));

      // a view: no backend registration, its own id and bounds, it moves bytes, and it outlives its parent
      MemorySegment parentMem = arena.allocate(4 * MIB, 4096);
      fill(parentMem, 42);
      MemoryDesc parent = a.registerMemory(parentMem);
      long backendBefore = st.backendRegistrations();
      MemoryDesc view = a.registerMemory(parentMem.asSlice(MIB, MIB));
      assertEquals(backendBefore, st.backendRegistrations(), "the view cost no backend registration: " + st);
      assertEquals(1, st.viewsFromCache());
      assertNotEquals(parent.id(), view.id());
      assertEquals(parentMem.address() + MIB, view.address());
      assertEquals(MIB, view.size());
      ok(a.write(view, 0, remote, 0, MIB, a.allocateTransferUid()));
      assertEquals(-1, remoteMem.mismatch(parentMem.asSlice(MIB, MIB)), "the view's bytes landed");
      IoEngineException outside = assertThrows(IoEngineException.class, () -> {
        TransferStatus s = a.write(view, 1, remote, 0, MIB, a.allocateTransferUid());
        if (s.failed()) throw new IoEngineException(s.code(), s.message());
      });
      assertEquals(StatusCode.ERR_INVALID_ARGS, outside.code(), "a view is bounded by its own size: " + outside.getMessage());

      a.deregisterMemory(parent);
      fill(parentMem, 43);
      ok(a.write(view, 0, remote, 0, MIB, a.allocateTransferUid()));
      assertEquals(-1, remoteMem.mismatch(parentMem.asSlice(MIB, MIB)), "the view works after its parent was deregistered");
      assertEquals(StatusCode.ERR_NOT_FOUND, a.write(parent, 0, remote, 0, 4096, a.allocateTransferUid()).code());

      // many views in one call: none costs a backend registration
      MemoryDesc pool = a.registerMemory(parentMem);
      backendBefore = st.backendRegistrations();
      List<MemoryRegistration> blocks = new ArrayList<>();
      for (int i = 0; i < 64; i++) blocks.add(MemoryRegistration.host(parentMem.asSlice(i * 65536L, 65536)));
      List<MemoryDesc> views = a.registerMemories(blocks);
      assertEquals(backendBefore, st.backendRegistrations(), st.toString());
      assertEquals(65, st.viewsFromCache());
      ok(a.read(views.get(63), 0, remote, 0, 65536, a.allocateTransferUid()));
      assertEquals(-1, parentMem.asSlice(63 * 65536L, 65536).mismatch(remoteMem.asSlice(0, 65536)), "read into a view");

      // all or none: a refused region names its index, and nothing of the call is registered
      long regionsBefore = st.regions();
      List<MemoryRegistration> bad = new ArrayList<>(List.of(MemoryRegistration.host(arena.allocate(4096)),
          MemoryRegistration.host(arena.allocate(4096)), MemoryRegistration.host(MemorySegment.ofArray(new byte[4096]))));
      IoEngineException x = assertThrows(IoEngineException.class, () -> a.registerMemories(bad));
      assertEquals(StatusCode.ERR_INVALID_ARGS, x.code());
      assertTrue(x.getMessage().startsWith("regions[2]: memory must be a native segment"), x.getMessage());
      assertEquals(regionsBefore, st.regions());
      assertEquals(List.of(), a.registerMemories(List.of()));

      // bulk deregistration: all or none
      a.deregisterMemories(many);
      assertEquals(StatusCode.ERR_NOT_FOUND, a.write(many.get(0), 0, remote, 0, 4096, a.allocateTransferUid()).code());
      List<MemoryDesc> again = List.of(view, many.get(5));
      x = assertThrows(IoEngineException.class, () -> a.deregisterMemories(again));
      assertEquals(StatusCode.ERR_NOT_FOUND, x.code());
      assertTrue(x.getMessage().startsWith("descs[1]: memory id " + many.get(5).id()), x.getMessage());
      ok(a.write(view, 0, remote, 0, 4096, a.allocateTransferUid())); // untouched by the refused call
      a.deregisterMemories(views);
      a.deregisterMemories(List.of(view, pool));
      assertEquals(200 + 1 + 64 + 2, st.deregistered(), st.toString());
      System.out.println(type + ": " + st);
    }
  }
}
