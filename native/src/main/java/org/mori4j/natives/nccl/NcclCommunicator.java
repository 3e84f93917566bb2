package org.mori4j.natives.nccl;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.cuda.CudaConstants;
import org.mori4j.natives.cuda.CudaDriver;
import org.mori4j.natives.cuda.CudaExecutionApi;
import org.mori4j.natives.gpu.NativeResource;

/**
 * The owner of one NCCL communicator ({@code ncclComm_t}) for one rank on one CUDA device, and of the
 * non-blocking stream its collectives run on. NCCL takes the device from the calling thread's current CUDA
 * context, so each call here makes the device's primary context (the one {@code CudaRuntime} and the CUDA
 * runtime share) current for its duration and puts the caller's context back after, which leaves the
 * runtime's per-thread context cache valid. {@link #close()} destroys the communicator, then the stream,
 * then releases the context; {@link #abort()} is the way out when a peer died and a collective will never
 * finish. Not thread-safe: one thread drives a communicator, as NCCL requires.
 */
public final class NcclCommunicator extends NativeResource {
  private final int device;
  private final int cuDevice;
  private final MemorySegment context;
  private final MemorySegment comm;
  private final MemorySegment stream;
  private final int rank;
  private final int nRanks;
  private boolean aborted;

  private NcclCommunicator(int device, int cuDevice, MemorySegment context, MemorySegment comm, MemorySegment stream, int rank, int nRanks) {
    this.device = device;
    this.cuDevice = cuDevice;
    this.context = context;
    this.comm = comm;
    this.stream = stream;
    this.rank = rank;
    this.nRanks = nRanks;
  }

  /**
   * {@code ncclCommInitRank} for {@code rank} of {@code nRanks} on CUDA device {@code device} (an ordinal of
   * this process). Blocks until every rank has called it with the same id. Each rank needs its own GPU: NCCL
   * refuses two ranks of one communicator on one device.
   */
  public static NcclCommunicator initRank(int device, int nRanks, int rank, NcclUniqueId id) {
    checkRanks(nRanks, rank);
    if (id == null) throw new IllegalArgumentException("id must not be null");
    Nccl.require();
    Opened ctx = Opened.of(device);
    try {
      MemorySegment comm = ctx.run(() -> Nccl.commInitRank(nRanks, id, rank));
      return ctx.finish(comm, rank, nRanks);
    } catch (RuntimeException e) {
      ctx.release();
      throw e;
    }
  }

  /**
   * One communicator over {@code devices} of this process, rank i on {@code devices[i]}, created together in
   * one NCCL group (what {@code ncclCommInitAll} does): for tests and single-process runs.
   */
  public static List<NcclCommunicator> initAll(int... devices) {
    if (devices == null || devices.length == 0) throw new IllegalArgumentException("devices must name at least one device");
    for (int i = 0; i < devices.length; i++)
      for (int j = 0; j < i; j++)
        if (devices[i] == devices[j]) throw new IllegalArgumentException("NCCL needs one GPU per rank: device " + devices[i] + " is named twice");
    Nccl.require();
    NcclUniqueId id = Nccl.uniqueId();
    List<Opened> opened = new ArrayList<>();
    List<MemorySegment> comms = new ArrayList<>();
    try {
      for (int d : devices) opened.add(Opened.of(d));
      Nccl.groupStart();
      try {
        for (int r = 0; r < devices.length; r++) {
          int rank = r;
          comms.add(opened.get(r).run(() -> Nccl.commInitRank(devices.length, id, rank)));
        }
      } finally {
        Nccl.groupEnd();
      }
    } catch (RuntimeException e) {
      abortAndRelease(comms, opened, 0, e);
      throw e;
    }
    List<NcclCommunicator> out = new ArrayList<>();
    int r = 0;
    try {
      for (; r < devices.length; r++) out.add(opened.get(r).finish(comms.get(r), r, devices.length));
      return out;
    } catch (RuntimeException e) {
      for (NcclCommunicator c : out) {
        try {
          c.abort();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      opened.get(r).release(); // finish aborted rank r's communicator itself
      abortAndRelease(comms, opened, r + 1, e);
      throw e;
    }
  }

  /** Aborts the communicators from index {@code from} on and releases their contexts, adding failures to {@code cause}. */
  private static void abortAndRelease(List<MemorySegment> comms, List<Opened> opened, int from, RuntimeException cause) {
    for (int r = from; r < opened.size(); r++) {
      if (r < comms.size()) {
        MemorySegment c = comms.get(r);
        try {
          opened.get(r).run(() -> {
            Nccl.commAbort(c);
            return null;
          });
        } catch (RuntimeException suppressed) {
          cause.addSuppressed(suppressed);
        }
      }
      opened.get(r).release();
    }
  }

  private static void checkRanks(int nRanks, int rank) {
    if (nRanks < 1) throw new IllegalArgumentException("nRanks must be at least 1: " + nRanks);
    if (rank < 0 || rank >= nRanks) throw new IllegalArgumentException("rank must be in [0, " + nRanks + "): " + rank);
  }

  /** This process's ordinal of the communicator's GPU. */
  public int device() {
    return device;
  }

  public int rank() {
    return rank;
  }

  public int nRanks() {
    return nRanks;
  }

  /**
   * {@code ncclAllReduce} of {@code count} elements from device address {@code send} into {@code recv} (the
   * same address for in place) on this communicator's stream; returns once issued. Every rank must call it
   * with the same count, type and op.
   */
  public void allReduce(long send, long recv, long count, NcclDataType type, NcclRedOp op) {
    checkOpen();
    if (count < 0) throw new IllegalArgumentException("count must not be negative: " + count);
    if (type == null || op == null) throw new IllegalArgumentException("type and op must not be null (type " + type + ", op " + op + ")");
    within(() -> {
      Nccl.allReduce(send, recv, count, type, op, comm, stream);
      return null;
    });
  }

  /** Blocks until everything issued on this communicator's stream has finished; a failed collective throws. */
  public void synchronize() {
    checkOpen();
    within(() -> {
      CudaExecutionApi.streamSynchronize(stream);
      return null;
    });
  }

  /**
   * {@code ncclCommGetAsyncError}: {@link Nccl#ncclSuccess}, {@link Nccl#ncclInProgress}, or the error a
   * collective hit (a peer that died shows up here while its partners still wait).
   */
  public int asyncError() {
    checkOpen();
    return within(() -> Nccl.commAsyncError(comm));
  }

  /**
   * {@code ncclCommAbort}: frees the communicator without waiting for its peers, ending any collective that
   * waits for a rank that is gone. The stream and context are released as by {@link #close()}.
   */
  public void abort() {
    aborted = true;
    close();
  }

  @Override
  protected void release() {
    NativeException failure = null;
    try {
      within(() -> {
        if (aborted) Nccl.commAbort(comm);
        else Nccl.commDestroy(comm);
        return null;
      });
    } catch (NativeException e) {
      failure = e;
    }
    try {
      within(() -> {
        CudaExecutionApi.streamDestroy(stream);
        return null;
      });
    } catch (NativeException e) {
      if (failure == null) failure = e;
      else failure.addSuppressed(e);
    }
    CudaDriver.primaryContextRelease(cuDevice);
    if (failure != null) throw failure;
  }

  @Override
  protected String describe() {
    return "NCCL communicator rank " + rank + " of " + nRanks + " on device " + device;
  }

  private <T> T within(Supplier<T> call) {
    return Opened.within(context, call);
  }

  /** A device's primary context retained for a communicator under construction. */
  private record Opened(int device, int cuDevice, MemorySegment context) {
    static Opened of(int device) {
      int count = CudaDriver.deviceCount();
      if (device < 0 || device >= count) throw new IllegalArgumentException("device must be in [0, " + count + "): " + device);
      int cu = CudaDriver.device(device);
      return new Opened(device, cu, CudaDriver.primaryContextRetain(cu));
    }

    <T> T run(Supplier<T> call) {
      return within(context, call);
    }

    NcclCommunicator finish(MemorySegment comm, int rank, int nRanks) {
      MemorySegment stream;
      try {
        int commDevice = run(() -> Nccl.commCuDevice(comm));
        if (commDevice != cuDevice)
          throw new IllegalStateException("NCCL put rank " + rank + " on CUDA device " + commDevice + ", not device " + device + " (" + cuDevice + ")");
        stream = run(() -> CudaExecutionApi.streamCreate(CudaConstants.CU_STREAM_NON_BLOCKING));
      } catch (RuntimeException e) {
        try {
          run(() -> {
            Nccl.commAbort(comm);
            return null;
          });
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      }
      return new NcclCommunicator(device, cuDevice, context, comm, stream, rank, nRanks);
    }

    void release() {
      CudaDriver.primaryContextRelease(cuDevice);
    }

    static <T> T within(MemorySegment context, Supplier<T> call) {
      MemorySegment previous = CudaDriver.currentContext();
      boolean swap = !previous.equals(context);
      if (swap) CudaDriver.setCurrentContext(context);
      try {
        return call.get();
      } finally {
        if (swap) CudaDriver.setCurrentContext(previous);
      }
    }
  }
}
