import java.lang.foreign.*;
public class X {
  static final ValueLayout.OfLong L = ValueLayout.JAVA_LONG;
  static long joinsSeg(long[] lo, long[] ro, long[] sizes) {
    int n = lo.length; long any = 0;
    MemorySegment ls = MemorySegment.ofArray(lo), rs = MemorySegment.ofArray(ro);
    for (int i = 0; i < n - 1; i++) {
      long s = sizes[i];
      long d = (ls.getAtIndex(L, i + 1) - lo[i] - s) | (rs.getAtIndex(L, i + 1) - ro[i] - s);
      any |= ~(d | -d);
    }
    return any;
  }
  static long joinsSeg2(long[] lo, long[] ro, long[] sizes) {
    int n = lo.length; long any = 0;
    MemorySegment ls = MemorySegment.ofArray(lo), rs = MemorySegment.ofArray(ro), ss = MemorySegment.ofArray(sizes);
    for (long i = 0; i < n - 1; i++) {
      long s = ss.getAtIndex(L, i);
      long d = (ls.getAtIndex(L, i + 1) - ls.getAtIndex(L, i) - s) | (rs.getAtIndex(L, i + 1) - rs.getAtIndex(L, i) - s);
      any |= ~(d | -d);
    }
    return any;
  }
  static long full(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    int n = lo.length; long s0 = sizes[0]; long bad = 0, differ = 0, sum = 0, any = 0;
    MemorySegment lseg = MemorySegment.ofArray(lo), rseg = MemorySegment.ofArray(ro);
    for (int i = 0; i < n - 1; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
      differ |= s ^ s0;
      sum += s;
      long d = (lseg.getAtIndex(L, i + 1) - a - s) | (rseg.getAtIndex(L, i + 1) - b - s);
      any |= ~(d | -d);
    }
    return bad | differ | any | sum;
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
    long[] off = new long[blocks], sz = new long[blocks];
    for (int i = 0; i < blocks; i++) { off[i] = (long)(blocks - 1 - i) * 2 * B; sz[i] = B; }
    long region = 2L * blocks * B;
    for (int r = 0; r < 2; r++) {
      time("joinsSeg", () -> joinsSeg(off, off, sz));
      time("joinsSeg2", () -> joinsSeg2(off, off, sz));
      time("full", () -> full(off, off, sz, region, region));
    }
  }
}
