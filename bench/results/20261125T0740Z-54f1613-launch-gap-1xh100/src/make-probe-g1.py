# G1's probe build (copies only; never compiled into the product): H4's stage stamps (../20261125T0631Z-11b599a-batch-host-cost/
# src/make-probe.py, run first into OUT) plus stamps inside the launch itself: GatherKernel.launch's entry (13), before
# gpu.launch (14), CudaRuntime.launch right before cuLaunchKernel's downcall (15) and right after it (16), and
# DeviceTransfers after the event record (17). Usage: python3 make-probe-g1.py ROOT OUT  (after H4's make-probe.py ROOT OUT)
import os, subprocess, sys
root, out = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
h4 = os.path.join(root, 'bench/results/20261125T0631Z-11b599a-batch-host-cost/src/make-probe.py')
subprocess.run([sys.executable, h4, root, out], check=True)
P = 'org.mori4j.transport.Probe.t'
def patch(src, dst, pairs):
    s = open(src).read()
    for old, new in pairs:
        if old not in s: sys.exit('probe: not found in ' + src + ': ' + old[:70])
        s = s.replace(old, new, 1)
    open(dst, 'w').write(s)
patch(os.path.join(root, 'transport/src/main/java/org/mori4j/transport/xgmi/GatherKernel.java'), os.path.join(out, 'GatherKernel.java'), [
 ('    int device = stream.device();\n    GpuFunction f = function(device);', '    ' + P + '(13);\n    int device = stream.device();\n    GpuFunction f = function(device);'),
 ('    gpu.launch(f, grid, Dim3.of(THREADS), 0, stream,', '    ' + P + '(14);\n    gpu.launch(f, grid, Dim3.of(THREADS), 0, stream,'),
])
patch(os.path.join(root, 'native/src/main/java/org/mori4j/natives/cuda/CudaRuntime.java'), os.path.join(out, 'CudaRuntime.java'), [
 ('        CudaExecutionApi.launchKernel(f, grid.x(), grid.y(), grid.z(), block.x(), block.y(), block.z(), sharedMemBytes, streamHandle, scratch.write(args));',
  '        MemorySegment pa = scratch.write(args);\n        ' + P + '(15);\n        CudaExecutionApi.launchKernel(f, grid.x(), grid.y(), grid.z(), block.x(), block.y(), block.z(), sharedMemBytes, streamHandle, pa);\n        ' + P + '(16);'),
])
patch(os.path.join(out, 'DeviceTransfers.java'), os.path.join(out, 'DeviceTransfers.java'), [
 ('      pool.event(slot).record(stream);\n      if (XgmiTrace.ON) XgmiTrace.launched();', '      pool.event(slot).record(stream);\n      ' + P + '(17);\n      if (XgmiTrace.ON) XgmiTrace.launched();'),
])
# more stamp slots than H4's 16
open(os.path.join(out, 'Probe.java'), 'w').write('package org.mori4j.transport;\n/** TEMPORARY stage probe (not committed as product code). */\npublic final class Probe { public static final long[] T = new long[24]; public static final long[] R = new long[8]; public static void t(int i) { T[i] = System.nanoTime(); } }\n')
print('G1 probe sources in', out)
