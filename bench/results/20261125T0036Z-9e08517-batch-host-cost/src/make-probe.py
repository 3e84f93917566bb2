# Probe build (not committed): System.nanoTime stamps at each stage of the batch call, in copies of four classes.
import re, sys, os
root = '/work/main'; out = '/tmp/h1/probe-src'
def patch(rel, pairs):
    s = open(os.path.join(root, rel)).read()
    for old, new in pairs:
        if old not in s: sys.exit('probe: not found in ' + rel + ': ' + old[:60])
        s = s.replace(old, new, 1)
    open(os.path.join(out, os.path.basename(rel)), 'w').write(s)
P = 'org.mori4j.transport.Probe.t'
patch('engine-actors/src/main/java/org/mori4j/io/internal/TransferPath.java', [
 ('    String rn = read ? "remoteSrc" : "remoteDst";\n    Routes r = routes;\n    String err = check(r, local, ln, remote, rn);\n    if (err != null) return failed(r, err);\n    if (lo == null',
  '    String rn = read ? "remoteSrc" : "remoteDst";\n    ' + P + '(0);\n    Routes r = routes;\n    String err = check(r, local, ln, remote, rn);\n    if (err != null) return failed(r, err);\n    if (lo == null'),
 ('    String bad = blocks.scan(lo, ro, sizes, local.size(), remote.size(), ln, rn);\n',
  '    ' + P + '(1);\n    String bad = blocks.scan(lo, ro, sizes, local.size(), remote.size(), ln, rn);\n    ' + P + '(2);\n'),
 ('      if (b.backend().issueFromCaller(st)) return st;',
  '      ' + P + '(3);\n      if (b.backend().issueFromCaller(st)) { ' + P + '(11); return st; }'),
])
patch('transport/src/main/java/org/mori4j/transport/xgmi/XgmiWorker.java', [
 ('      issued = issuer.issueReady(op);', '      ' + P + '(4);\n      issued = issuer.issueReady(op);\n      ' + P + '(9);'),
 ('      wakeup();\n    }\n    return true;', '      wakeup();\n    }\n    ' + P + '(10);\n    return true;'),
 ('    if (closing || !driven() || hasQueued()) return false;\n    if (!TURN.compareAndSet(this, FREE, CALLER)) return false;',
  '    if (closing || !driven() || hasQueued()) { org.mori4j.transport.Probe.R[hasQueued() ? 1 : 0]++; return false; }\n    if (!TURN.compareAndSet(this, FREE, CALLER)) { org.mori4j.transport.Probe.R[2 + (int) TURN.getVolatile(this)]++; return false; }'),
 ('    if (issued == DeviceTransfers.NO_SLOT) return false;', '    if (issued == DeviceTransfers.NO_SLOT) { org.mori4j.transport.Probe.R[6]++; return false; }'),
])
patch('transport/src/main/java/org/mori4j/transport/xgmi/XgmiIssuer.java', [
 ('    int issued = transfers.issueReady(op, r, device, remoteBase, op.minBlockSize(), op.maxBlockSize());',
  '    ' + P + '(5);\n    int issued = transfers.issueReady(op, r, device, remoteBase, op.minBlockSize(), op.maxBlockSize());'),
])
s = open(os.path.join(root, 'transport/src/main/java/org/mori4j/transport/xgmi/DeviceTransfers.java')).read()
m = re.search(r'kernel\.launch\(stream, pool\.kernelTable\(slot, bytes, stream\), ', s)
if not m: sys.exit('probe: launch call not found')
s = s.replace('        kernel.launch(stream, pool.kernelTable(slot, bytes, stream), ',
  '        ' + P + '(6);\n        long up = pool.kernelTable(slot, bytes, stream);\n        ' + P + '(7);\n        kernel.launch(stream, up, ', 1)
s = s.replace('        listener.kernelLaunched();', '        ' + P + '(8);\n        listener.kernelLaunched();', 1)
open(os.path.join(out, 'DeviceTransfers.java'), 'w').write(s)
open(os.path.join(out, 'Probe.java'), 'w').write('package org.mori4j.transport;\n/** TEMPORARY stage probe (not committed). */\npublic final class Probe { public static final long[] T = new long[16]; public static final long[] R = new long[8]; public static void t(int i) { T[i] = System.nanoTime(); } }\n')
print('probe sources in', out)
