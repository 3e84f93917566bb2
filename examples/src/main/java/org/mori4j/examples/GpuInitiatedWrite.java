package org.mori4j.examples;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.gpuinit.EndpointHandle;
import org.mori4j.io.gpuinit.GpuInitiatedKernels;
import org.mori4j.io.gpuinit.GpuQueueLayout;
import org.mori4j.io.gpuinit.RdmaDeviceContext;
import org.mori4j.io.gpuinit.RdmaEndpoint;
import org.mori4j.io.gpuinit.RdmaEndpointConfig;
import org.mori4j.io.gpuinit.RdmaMemoryRegion;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * MORI's GPU-initiated example (simple GPU data interchange) between two JVMs: this process is the sender on GPU 0,
 * a child JVM it starts on loopback is the receiver (on GPU 1, or GPU 0 with one GPU). The steps are MORI's, printed
 * one by one: the context (here an {@link IoEngine} whose host proxy executes what kernels post; there is no NIC),
 * devices and ports, endpoints with their QP numbers, connect, GPU buffers registered, then a kernel fills the send
 * buffer with a value, posts the RDMA write ({@code PostWrite}), updates the doorbell record, rings the doorbell and
 * polls the completion queue; the receiver verifies the bytes with a kernel on its own GPU. Exit 0 when every byte
 * arrived, 1 on a failure, 2 when it cannot run (no GPU, with the runtime's reason, or bad arguments).
 */
public final class GpuInitiatedWrite {
  private GpuInitiatedWrite() {}

  static final int DEFAULT_BYTES = 1024;
  static final int DEFAULT_VALUE = 42;

  /** The sender's kernel in MORI's names, and the receiver's check. */
  static final String SOURCE = """
      #include "mori_rdma.cuh"

      extern "C" __global__ void example_write(MoriRdmaEndpoint* ep, uint8_t* send, unsigned int lkey, unsigned long long remote,
                                               unsigned int rkey, unsigned int bytes, unsigned int value, MoriRdmaCqe* cqe) {
        for (unsigned int i = threadIdx.x; i < bytes; i += blockDim.x) send[i] = (uint8_t) value;   // 1. fill
        __threadfence_system();
        __syncthreads();
        if (threadIdx.x != 0) return;
        unsigned long long idx = PostWrite(ep, (unsigned long long) send, lkey, remote, rkey, bytes); // 2. post the write
        UpdateSendDbrRecord(ep, idx, 1);                                                             // 3. doorbell record
        RingDoorbell(ep, idx + 1);                                                                   //    and doorbell
        const unsigned long long start = mori_rdma_now_ns();
        while (!PollCq(ep, cqe)) {                                                                   // 5. poll the CQ
          if (ep->waitTimeoutNs != 0 && mori_rdma_now_ns() - start > ep->waitTimeoutNs) {           //    (bounded wait)
            cqe->status = MORI_RDMA_WC_GENERAL_ERR;
            cqe->wrId = ~0ull;
            return;
          }
        }
        UpdateCqDbrRecord(ep, ep->cqPollIdx);                                                        //    give the CQE back
      }

      extern "C" __global__ void example_verify(const uint8_t* recv, unsigned int bytes, unsigned int value, unsigned int* wrong) {
        for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += gridDim.x * blockDim.x)
          if (((const volatile uint8_t*) recv)[i] != (uint8_t) value) atomicAdd(wrong, 1u);
      }
      """;

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  record Options(int bytes, int value, int receiverDevice) {}

  static Options parse(String[] args) {
    int bytes = DEFAULT_BYTES, value = DEFAULT_VALUE, receiver = -1;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--help") || a.equals("-h")) return null;
      if (i + 1 >= args.length) throw new IllegalArgumentException(a.startsWith("--") ? a + " needs a value" : "unexpected argument '" + a + "'");
      String v = args[++i];
      try {
        switch (a) {
          case "--bytes" -> bytes = Integer.parseInt(v);
          case "--value" -> value = Integer.parseInt(v);
          case "--receiver" -> receiver = Integer.parseInt(v);
          default -> throw new IllegalArgumentException("unknown option '" + a + "'");
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(a + ": '" + v + "' is not a number");
      }
    }
    if (bytes < 1 || bytes > (64 << 20)) throw new IllegalArgumentException("--bytes must be in 1..67108864: " + bytes);
    if (value < 0 || value > 255) throw new IllegalArgumentException("--value must be a byte value 0..255: " + value);
    return new Options(bytes, value, receiver);
  }

  static final String USAGE = "usage: GpuInitiatedWrite [--bytes N (default " + DEFAULT_BYTES + ")] [--value 0..255 (default " + DEFAULT_VALUE
      + ")]\n  a GPU kernel writes N bytes of the value to a receiver JVM's GPU through GPU-initiated endpoints (the engine's host proxy "
      + "executes the work requests) and the receiver checks them on its GPU";

  static int run(String[] args, PrintStream out, PrintStream err) {
    Options o;
    try {
      o = parse(args);
    } catch (IllegalArgumentException e) {
      err.println("GpuInitiatedWrite: " + e.getMessage());
      err.println(USAGE);
      return 2;
    }
    if (o == null) {
      out.println(USAGE);
      return 0;
    }
    GpuRuntime gpu = GpuRuntimes.select("auto");
    if (!gpu.available()) {
      err.println("GpuInitiatedWrite: needs a GPU, and none can be used here: " + gpu.version());
      return 2;
    }
    int gpus;
    try {
      gpus = gpu.deviceCount();
    } catch (RuntimeException e) {
      err.println("GpuInitiatedWrite: needs a GPU, and the " + gpu.name() + " runtime cannot list its devices: " + e.getMessage());
      return 2;
    }
    if (gpus < 1) {
      err.println("GpuInitiatedWrite: needs a GPU: the " + gpu.name() + " runtime (" + gpu.version() + ") sees none");
      return 2;
    }
    try {
      return o.receiverDevice() >= 0 ? receiver(o, gpu) : sender(o, gpu, gpus, out, err);
    } catch (IOException | InterruptedException | RuntimeException e) {
      err.println("GpuInitiatedWrite: failed: " + e);
      return 1;
    }
  }

  // ---------------------------------------------------------------- sender: this JVM, GPU 0

  private static int sender(Options o, GpuRuntime gpu, int gpus, PrintStream out, PrintStream err) throws IOException, InterruptedException {
    HexFormat hex = HexFormat.of();
    int recvDevice = gpus > 1 ? 1 : 0;
    out.printf(Locale.ROOT, "=== GPU-initiated write (MORI's simple GPU data interchange) ===%nTransferring %d bytes with value %d, GPU 0 (this JVM) -> "
        + "GPU %d (a child JVM)%n%n", o.bytes(), o.value(), recvDevice);
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
        GpuInitiatedWrite.class.getName(), "--receiver", Integer.toString(recvDevice), "--bytes", Integer.toString(o.bytes()))
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    BufferedReader from = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    PrintWriter to = new PrintWriter(child.getOutputStream(), true, StandardCharsets.UTF_8);
    try (IoEngine engine = IoEngine.create("gpuinit-sender", IoEngineConfig.loopback())) {
      out.println("Step 1: Initializing the context...");
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      try (RdmaDeviceContext ctx = RdmaDeviceContext.open(engine)) {
        out.printf(Locale.ROOT, "  engine %s with a TCP backend on %s:%d; its host proxy executes what kernels post (no RDMA NIC: emulation)%n",
            engine.engineDesc().key(), engine.engineDesc().host(), engine.engineDesc().port());
        out.println("Step 2: Getting devices and ports...");
        out.printf(Locale.ROOT, "  %d GPU(s) (%s, %s); sender on GPU 0 (%s), receiver on GPU %d; the \"port\": the proxy's TCP backend on loopback%n",
            gpus, gpu.name(), gpu.version(), gpu.deviceName(0), recvDevice);
        String[] ready = expect(from, "READY");
        out.println("Step 3: Creating device contexts...");
        out.println("  sender context on " + engine.engineDesc().key() + "; receiver context in the child JVM (pid " + child.pid() + ") on " + ready[4]);
        out.println("Step 4: Creating endpoints (onGpu)...");
        RdmaEndpoint ep = ctx.createEndpoint(RdmaEndpointConfig.gpu(0));
        EndpointHandle peer = EndpointHandle.fromBytes(hex.parseHex(ready[2]));
        out.printf(Locale.ROOT, "  Endpoints created (QPN: send=%d, recv=%d); the send endpoint's queues at 0x%x in pinned host memory%n", ep.qpn(),
            peer.qpn(), ep.address());
        out.println("Step 5: Connecting endpoints...");
        engine.registerRemoteEngine(EngineDesc.fromBytes(hex.parseHex(ready[1])));
        ctx.connectEndpoint(ep, peer);
        to.println("PEER " + hex.formatHex(engine.engineDesc().toBytes()) + " " + hex.formatHex(ep.handle().toBytes()));
        expect(from, "CONNECTED");
        out.println("  Endpoints connected (both sides), state " + ep.state());
        out.println("Step 6: Allocating and registering GPU buffers...");
        try (DeviceBuffer send = gpu.allocDevice(0, o.bytes()); DeviceBuffer cqe = gpu.allocDevice(0, GpuQueueLayout.CQE_BYTES);
             GpuStream stream = gpu.createStream(0);
             GpuModule module = GpuInitiatedKernels.load(gpu, 0, SOURCE, "gpu_initiated_write.cu")) {
          RdmaMemoryRegion mrSend = ctx.registerMemoryRegion(send.address(), o.bytes(), 0, MemoryLocationType.GPU, GpuQueueLayout.ACCESS_ALL);
          RdmaMemoryRegion mrRecv = RdmaMemoryRegion.fromBytes(hex.parseHex(ready[3]));
          out.printf(Locale.ROOT, "  send buffer 0x%x on GPU 0 (lkey %d), receive buffer 0x%x on GPU %d (rkey %d)%n", mrSend.address(), mrSend.lkey(),
              mrRecv.address(), recvDevice, mrRecv.rkey());
          out.println("Step 7: Launching the GPU kernel: fill, PostWrite, UpdateSendDbrRecord, RingDoorbell, PollCq, UpdateCqDbrRecord...");
          long t0 = System.nanoTime();
          gpu.launch(module.function("example_write"), Dim3.of(1), Dim3.of(256), 0, stream, KernelArgs.of().pointer(ep.address())
              .pointer(send.address()).i32(mrSend.lkey()).i64(mrRecv.address()).i32(mrRecv.rkey()).i32(o.bytes()).i32(o.value()).pointer(cqe.address()));
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
          while (!stream.isComplete()) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("the kernel did not see its completion within 60 s; endpoint " + ep);
            Thread.sleep(1);
          }
          stream.synchronize();
          long us = (System.nanoTime() - t0) / 1000;
          int status, byteLen;
          long wrId;
          try (Arena a = Arena.ofConfined()) {
            MemorySegment c = a.allocate(GpuQueueLayout.CQE_BYTES);
            gpu.copyDeviceToHost(c, cqe.address(), GpuQueueLayout.CQE_BYTES);
            status = c.get(ValueLayout.JAVA_INT, GpuQueueLayout.CQE_STATUS);
            byteLen = c.get(ValueLayout.JAVA_INT, GpuQueueLayout.CQE_BYTE_LEN);
            wrId = c.get(ValueLayout.JAVA_LONG, GpuQueueLayout.CQE_WR_ID);
          }
          out.printf(Locale.ROOT, "  the kernel polled its completion: status %s, byteLen %d, wrId %d (kernel launch to synchronize: %d us)%n",
              GpuQueueLayout.statusName(status), byteLen, wrId, us);
          if (status != GpuQueueLayout.WC_SUCCESS) {
            err.println("GpuInitiatedWrite: the write completed with " + GpuQueueLayout.statusName(status) + "; endpoint errors " + ep.errors());
            return 1;
          }
          out.println("Step 8: Verifying on the receiving GPU...");
          to.println("VERIFY " + o.value());
          String[] verified = expect(from, "VERIFIED");
          long wrong = Long.parseLong(verified[1]);
          if (wrong != 0) {
            out.printf(Locale.ROOT, "Failure: %d of %d bytes on GPU %d are not %d%n", wrong, o.bytes(), recvDevice, o.value());
            return 1;
          }
          out.printf(Locale.ROOT, "Success! All %d bytes verified with value %d (by a kernel on GPU %d in the receiver JVM)%n", o.bytes(), o.value(),
              recvDevice);
          out.println("Step 9: Cleaning up resources...");
          ctx.deregisterMemoryRegion(mrSend);
          ep.close();
        }
      }
      to.close();
      if (!child.waitFor(30, TimeUnit.SECONDS)) {
        err.println("GpuInitiatedWrite: the receiver JVM did not exit within 30 s");
        return 1;
      }
      out.println("  Resources cleaned up (receiver exit " + child.exitValue() + ")");
      out.println();
      out.println("=== Example completed successfully! ===");
      return child.exitValue() == 0 ? 0 : 1;
    } finally {
      child.destroyForcibly();
    }
  }

  private static String[] expect(BufferedReader from, String word) throws IOException {
    String line;
    StringBuilder seen = new StringBuilder();
    while ((line = from.readLine()) != null) {
      if (line.startsWith(word + " ") || line.equals(word)) return line.split(" ");
      seen.append(line).append('\n');
    }
    throw new IllegalStateException("the receiver JVM ended before saying " + word + ":\n" + seen);
  }

  // ---------------------------------------------------------------- receiver: the child JVM

  private static int receiver(Options o, GpuRuntime gpu) throws IOException {
    HexFormat hex = HexFormat.of();
    int device = o.receiverDevice();
    PrintStream out = System.out;
    try (IoEngine engine = IoEngine.create("gpuinit-receiver-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      try (RdmaDeviceContext ctx = RdmaDeviceContext.open(engine);
           DeviceBuffer recv = gpu.allocDevice(device, o.bytes());
           DeviceBuffer wrong = gpu.allocDevice(device, 8);
           GpuStream stream = gpu.createStream(device);
           GpuModule module = GpuInitiatedKernels.load(gpu, device, SOURCE, "gpu_initiated_write.cu")) {
        gpu.fill(recv.address(), (byte) 0, o.bytes());
        RdmaEndpoint ep = ctx.createEndpoint(RdmaEndpointConfig.gpu(device));
        RdmaMemoryRegion mr = ctx.registerMemoryRegion(recv.address(), o.bytes(), device, MemoryLocationType.GPU, GpuQueueLayout.ACCESS_ALL);
        out.println("READY " + hex.formatHex(engine.engineDesc().toBytes()) + " " + hex.formatHex(ep.handle().toBytes()) + " " + hex.formatHex(mr.toBytes())
            + " GPU-" + device + "(" + gpu.deviceName(device).replace(' ', '_') + ")");
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
          String[] w = line.trim().split(" ");
          if (w[0].equals("PEER")) {
            engine.registerRemoteEngine(EngineDesc.fromBytes(hex.parseHex(w[1])));
            ctx.connectEndpoint(ep, EndpointHandle.fromBytes(hex.parseHex(w[2])));
            out.println("CONNECTED");
          } else if (w[0].equals("VERIFY")) {
            gpu.fill(wrong.address(), (byte) 0, 8);
            gpu.launch(module.function("example_verify"), Dim3.of(8), Dim3.of(256), 0, stream,
                KernelArgs.of().pointer(recv.address()).i32(o.bytes()).i32(Integer.parseInt(w[1])).pointer(wrong.address()));
            stream.synchronize();
            try (Arena a = Arena.ofConfined()) {
              MemorySegment s = a.allocate(4);
              gpu.copyDeviceToHost(s, wrong.address(), 4);
              out.println("VERIFIED " + Integer.toUnsignedLong(s.get(ValueLayout.JAVA_INT, 0)));
            }
          }
          out.flush();
        }
        ctx.deregisterMemoryRegion(mr);
        ep.close();
      }
    }
    return 0;
  }
}
