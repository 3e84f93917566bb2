# Probe build (not committed as code): System.nanoTime stamps at each stage of the batch call, in copies of four
# classes of the current tree. Adapted from ../20261125T0036Z-9e08517-batch-host-cost/src/make-probe.py (H1) to the
# tree after ac55b9e (fromCaller's issueReady/fused form). Usage: python3 make-probe.py [root] [out]
import re, sys, os
root = sys.argv[1] if len(sys.argv) > 1 else '/work/main'
out = sys.argv[2] if len(sys.argv) > 2 else '/tmp/h4/probe-src'
os.makedirs(out, exist_ok=True)
def patch(rel, pairs):
    s = open(os.path.join(root, rel)).read()
    for old, new in pairs:
        if old not in s: sys.exit('probe: not found in ' + rel + ': ' + old[:60])
        s = s.replace(old, new, 1)
    open(os.path.join(out, os.path.basename(rel)), 'w').write(s)
P = 'org.mori4j.transport.Probe.t'
R = 'org.mori4j.transport.Probe.R'
patch('engine-actors/src/main/java/org/mori4j/io/internal/TransferPath.java', [
 ('    String rn = read ? "remoteSrc" : "remoteDst";\n    Routes r = routes;\n    String err = check(r, local, ln, remote, rn);\n    if (err != null) return failed(r, err);\n    if (lo == null',
  '    String rn = read ? "remoteSrc" : "remoteDst";\n    ' + P + '(0);\n    Routes r = routes;\n    String err = check(r, local, ln, remote, rn);\n    if (err != null) return failed(r, err);\n    if (lo == null'),
 ('    String bad = blocks.scan(lo, ro, sizes, local.size(), remote.size(), ln, rn);\n',
  '    ' + P + '(1);\n    String bad = blocks.scan(lo, ro, sizes, local.size(), remote.size(), ln, rn);\n    ' + P + '(2);\n'),
 ('      if (b.backend().issueFromCaller(st)) return st;',
  '      ' + P + '(3);\n      if (b.backend().issueFromCaller(st)) { ' + P + '(11); return st; }'),
])
patch('transport/src/main/java/org/mori4j/transport/xgmi/XgmiWorker.java', [
 ('      issued = op != null ? issuer.issueReady(op) : fused.issueReady(group);',
  '      ' + P + '(4);\n      issued = op != null ? issuer.issueReady(op) : fused.issueReady(group);\n      ' + P + '(9);'),
 ('      wakeup();\n    }\n    return true;', '      wakeup();\n    }\n    ' + P + '(10);\n    return true;'),
 ('    if (closing || !driven() || hasQueued()) return false;\n    if (!TURN.compareAndSet(this, FREE, CALLER)) return false;',
  '    if (closing || !driven() || hasQueued()) { ' + R + '[hasQueued() ? 1 : 0]++; return false; }\n    if (!TURN.compareAndSet(this, FREE, CALLER)) { ' + R + '[2 + (int) TURN.getVolatile(this)]++; return false; }'),
 ('    if (issued == DeviceTransfers.NO_SLOT) return false;', '    if (issued == DeviceTransfers.NO_SLOT) { ' + R + '[6]++; return false; }'),
])
patch('transport/src/main/java/org/mori4j/transport/xgmi/XgmiIssuer.java', [
 ('    int issued = transfers.issueReady(op, r, device, remoteBase, op.minBlockSize(), op.maxBlockSize());',
  '    ' + P + '(5);\n    int issued = transfers.issueReady(op, r, device, remoteBase, op.minBlockSize(), op.maxBlockSize());'),
])
patch('transport/src/main/java/org/mori4j/transport/xgmi/DeviceTransfers.java', [
 ('        MemorySegment table = pool.hostTable(slot, bytes);\n        // offsets straight',
  '        MemorySegment table = pool.hostTable(slot, bytes);\n        ' + P + '(12);\n        // offsets straight'),
 ('        long kernelTable = pool.kernelTable(slot, bytes, stream);\n        queued = true;\n        kernel.launch(stream, kernelTable, n,',
  '        ' + P + '(6);\n        long kernelTable = pool.kernelTable(slot, bytes, stream);\n        ' + P + '(7);\n        queued = true;\n        kernel.launch(stream, kernelTable, n,'),
 ('        listener.kernelLaunched();\n      }\n      pool.event(slot).record(stream);',
  '        ' + P + '(8);\n        listener.kernelLaunched();\n      }\n      pool.event(slot).record(stream);'),
])
open(os.path.join(out, 'Probe.java'), 'w').write('package org.mori4j.transport;\n/** TEMPORARY stage probe (not committed). */\npublic final class Probe { public static final long[] T = new long[16]; public static final long[] R = new long[8]; public static void t(int i) { T[i] = System.nanoTime(); } }\n')
print('probe sources in', out)
