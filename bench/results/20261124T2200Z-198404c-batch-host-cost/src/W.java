public class W {
  static long[] out = new long[4096], E = new long[4096];
  static long joinsStore(long[] lo, long[] ro, long[] sizes) {
    int n = lo.length;
    for (int i = 0; i < n - 1; i++) out[i] = (lo[i + 1] - lo[i] - sizes[i]) | (ro[i + 1] - ro[i] - sizes[i]);
    return out[5];
  }
  static long shiftedEnds(long[] lo, long[] ro, long[] sizes) {
    int n = lo.length; long[] e = E;
    for (int i = 0; i < n - 1; i++) e[i + 1] = lo[i] + sizes[i];
    long any = 0;
    for (int i = 1; i < n; i++) { long d = lo[i] - e[i]; any |= ~(d | -d); }
    return any;
  }
  // join detection with separate arrays via shifted index: loads lo[i] and sizes[i-1]?
  static long mixedOffsets(long[] lo, long[] ro, long[] sizes, long[] lo2) {
    int n = lo.length; long any = 0;
    for (int i = 0; i < n - 1; i++) { long d = lo2[i + 1] - lo[i] - sizes[i]; any |= ~(d | -d); }
    return any;
  }
  // plain add reduction w/ more ops
  static long boundsAndSum(long[] lo, long[] ro, long[] sizes, long L, long R) {
    int n = lo.length; long bad = 0, sum = 0;
    for (int i = 0; i < n; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = L - s, rs = R - s;
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
      sum += s;
    }
    return bad | sum;
  }
  interface F { long run(); }
  static void time(String name, F f) {
    long sink = 0; int N = 20000; long[] t = new long[N];
    for (int w = 0; w < 3; w++) for (int i = 0; i < N; i++) { long s = System.nanoTime(); sink += f.run(); t[i] = System.nanoTime() - s; }
    java.util.Arrays.sort(t);
    System.out.printf("%-12s p50 %7.2f us  p10 %7.2f us  (%d)%n", name, t[N/2]/1e3, t[N/10]/1e3, sink & 1);
  }
  public static void main(String[] x) {
    int blocks = 4096; long B = 4096;
    long[] off = new long[blocks], sz = new long[blocks], off2;
    for (int i = 0; i < blocks; i++) { off[i] = (long)(blocks - 1 - i) * 2 * B; sz[i] = B; }
    off2 = off.clone();
    long region = 2L * blocks * B;
    for (int r = 0; r < 2; r++) {
      time("joinsStore", () -> joinsStore(off, off, sz));
      time("shiftedEnds", () -> shiftedEnds(off, off, sz));
      time("mixedOff", () -> mixedOffsets(off, off, sz, off2));
      time("boundsSum", () -> boundsAndSum(off, off, sz, region, region));
    }
  }
}
