public class ScanBench {
  static long total, minB, maxB; static int joins;
  // A: current
  static int scanA(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    int n = lo.length; long s0 = sizes[0]; long bad = 0, differ = 0;
    for (int i = 0; i < n; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
      differ |= s ^ s0;
    }
    if (bad < 0) return -1;
    long anyJoin = 0;
    for (int i = 0; i < n - 1; i++) {
      long d = (lo[i + 1] - lo[i] - sizes[i]) | (ro[i + 1] - ro[i] - sizes[i]);
      anyJoin |= (d - 1) & ~d;
    }
    return (int) ((anyJoin >>> 63) + (differ == 0 ? 0 : 2));
  }
  // only bounds loop of A
  static long boundsA(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    int n = lo.length; long s0 = sizes[0]; long bad = 0, differ = 0;
    for (int i = 0; i < n; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
      differ |= s ^ s0;
    }
    return bad | differ;
  }
  // single reduction
  static long boundsB(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    int n = lo.length; long bad = 0;
    for (int i = 0; i < n; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
    }
    return bad;
  }
  // min/max formulation: separate reductions
  static long boundsC(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    int n = lo.length; long bad = 0;
    for (int i = 0; i < n; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      bad |= (a | b | (s - 1)) | ((localSize - s - a) | (remoteSize - s - b));
    }
    return bad;
  }
  // joins loop
  static long joinsA(long[] lo, long[] ro, long[] sizes) {
    int n = lo.length; long anyJoin = 0;
    for (int i = 0; i < n - 1; i++) {
      long d = (lo[i + 1] - lo[i] - sizes[i]) | (ro[i + 1] - ro[i] - sizes[i]);
      anyJoin |= (d - 1) & ~d;
    }
    return anyJoin;
  }
  static long sumOr(long[] a) { long r = 0; for (int i = 0; i < a.length; i++) r |= a[i]; return r; }
  static long sumAdd(long[] a) { long r = 0; for (int i = 0; i < a.length; i++) r += a[i]; return r; }
  interface F { long run(); }
  static void time(String name, F f) {
    long sink = 0; int N = 20000; long[] t = new long[N];
    for (int w = 0; w < 3; w++) for (int i = 0; i < N; i++) { long s = System.nanoTime(); sink += f.run(); t[i] = System.nanoTime() - s; }
    java.util.Arrays.sort(t);
    System.out.printf("%-10s p50 %7.2f us  p10 %7.2f us  (%d)%n", name, t[N/2]/1e3, t[N/10]/1e3, sink & 1);
  }
  public static void main(String[] a) {
    int blocks = 4096; long B = 4096;
    long[] off = new long[blocks], sz = new long[blocks];
    for (int i = 0; i < blocks; i++) { off[i] = (long)(blocks - 1 - i) * 2 * B; sz[i] = B; }
    long region = 2L * blocks * B;
    for (int r = 0; r < 2; r++) {
    time("scanA", () -> scanA(off, off, sz, region, region));
    time("boundsA", () -> boundsA(off, off, sz, region, region));
    time("boundsB", () -> boundsB(off, off, sz, region, region));
    time("boundsC", () -> boundsC(off, off, sz, region, region));
    time("joinsA", () -> joinsA(off, off, sz));
    time("sumOr", () -> sumOr(off));
    time("sumAdd", () -> sumAdd(off));
    }
  }
}
