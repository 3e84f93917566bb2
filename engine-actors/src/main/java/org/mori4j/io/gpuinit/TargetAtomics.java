package org.mori4j.io.gpuinit;

import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * Atomics that peers post against this context's regions, checked as a NIC's responder would (rkey known,
 * REMOTE_ATOMIC, inside the region, 8-byte aligned). Host memory: a {@link VarHandle} fetch-add or
 * compare-and-exchange on the word, answered at once. GPU memory: {@link GpuAtomics}' kernel on a non-blocking
 * stream, answered when the proxy sees the stream complete (in launch order). Proxy thread only.
 */
final class TargetAtomics implements AutoCloseable {
  private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
  private static final int CELLS = 512;

  private record Job(GpuInitProtocol.PeerOp op, GpuStream stream, int cell) {}

  private final RdmaDeviceContext ctx;
  private final ArrayDeque<Job> gpuJobs = new ArrayDeque<>();
  private GpuAtomics gpu;
  private PinnedBuffer cells;
  private int nextCell;

  TargetAtomics(RdmaDeviceContext ctx) {
    this.ctx = ctx;
  }

  boolean busy() {
    return !gpuJobs.isEmpty();
  }

  void execute(GpuInitProtocol.PeerOp op) {
    Region r = ctx.rkeys.get(op.rkey());
    String why = null;
    int wc = WC_REM_ACCESS_ERR;
    if (r == null) why = "rkey " + op.rkey() + " is not a region of context " + ctx.name;
    else if (!r.allows(ACCESS_REMOTE_ATOMIC)) why = "rkey " + op.rkey() + " lacks REMOTE_ATOMIC";
    else if (!r.covers(op.remoteAddr(), 8)) why = "atomic at 0x" + Long.toHexString(op.remoteAddr()) + " outside rkey " + op.rkey() + "'s region";
    else if ((op.remoteAddr() & 7) != 0) {
      wc = WC_REM_INV_REQ_ERR;
      why = "atomic at 0x" + Long.toHexString(op.remoteAddr()) + " not 8-byte aligned";
    }
    if (why != null) {
      reply(op, wc, 0, why);
      return;
    }
    boolean cas = op.op() == OP_ATOMIC_CMP_AND_SWP;
    if (!r.gpu()) {
      MemorySegment s = r.host();
      long off = op.remoteAddr() - r.address();
      long old = cas ? (long) WORD.compareAndExchange(s, off, op.compareAdd(), op.swap()) : (long) WORD.getAndAdd(s, off, op.compareAdd());
      reply(op, WC_SUCCESS, old, "");
      return;
    }
    try {
      prepare(r.deviceId());
      if (gpuJobs.size() >= CELLS) {
        reply(op, WC_REM_OP_ERR, 0, "more than " + CELLS + " GPU atomics outstanding at context " + ctx.name);
        return;
      }
      int cell = nextCell;
      nextCell = (nextCell + 1) % CELLS;
      GpuStream s = gpu.launch(r.deviceId(), op.remoteAddr(), cas, op.compareAdd(), op.swap(), cells.address() + (long) cell * 8);
      gpuJobs.add(new Job(op, s, cell));
    } catch (RuntimeException e) {
      reply(op, WC_REM_OP_ERR, 0, "GPU atomic on device " + r.deviceId() + " failed: " + e.getMessage());
    }
  }

  int poll() {
    int n = 0;
    while (!gpuJobs.isEmpty()) {
      Job j = gpuJobs.peek();
      boolean done;
      try {
        done = j.stream().isComplete();
      } catch (RuntimeException e) {
        gpuJobs.poll();
        reply(j.op(), WC_REM_OP_ERR, 0, "GPU atomic failed: " + e.getMessage());
        n++;
        continue;
      }
      if (!done) break;
      gpuJobs.poll();
      reply(j.op(), WC_SUCCESS, cells.segment().get(ValueLayout.JAVA_LONG, (long) j.cell() * 8), "");
      n++;
    }
    return n;
  }

  /**
   * Everything a GPU atomic on {@code device} needs (kernel compiled and loaded, stream, pinned result cells), made
   * when a GPU region with REMOTE_ATOMIC is registered: compiling, loading a module or allocating pinned memory while
   * the application's kernels run could wait for them.
   */
  void prepare(int device) {
    if (gpu == null) gpu = new GpuAtomics(ctx.gpuRuntime());
    if (cells == null) cells = ctx.gpuRuntime().allocPinned((long) CELLS * 8);
    gpu.prepare(device);
  }

  private static void reply(GpuInitProtocol.PeerOp op, int wc, long old, String why) {
    op.replyTo().tell(new GpuInitProtocol.PeerOpResult(op.srcQpn(), op.wqeIndex(), wc, old, Proxy.clip(why)));
  }

  @Override
  public void close() {
    for (Job j : gpuJobs) reply(j.op(), WC_REM_OP_ERR, 0, "context " + ctx.name + " closed");
    gpuJobs.clear();
    if (gpu != null) gpu.close();
    if (cells != null) cells.close();
  }
}
