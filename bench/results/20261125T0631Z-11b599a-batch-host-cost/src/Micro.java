import java.util.Arrays;
public class Micro {
  // current: vector bounds loop + scalar join pass
  static long outOfBounds(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    long bad = 0;
    for (int i = 0; i < lo.length; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
    }
    return bad;
  }
  static int cur(long[] lo, long[] ro, long[] sizes, long L, long R) {
    if (outOfBounds(lo, ro, sizes, L, R) < 0) return -1;
    int n = lo.length; long s0 = sizes[0]; int joined = 0; long differ = 0;
    long endLo = lo[0] + s0, endRo = ro[0] + s0;
    for (int i = 1; i < n; i++) {
      long a = lo[i], b = ro[i], s = sizes[i];
      if (a == endLo && b == endRo) joined++;
      differ |= s ^ s0; endLo = a + s; endRo = b + s;
    }
    return joined + (differ == 0 ? 0 : 1 << 20);
  }
  static long rBad, rApart, rDiffer;
  // fused: bounds, "any join" as an and-reduction, sizes differ, one loop over i and i-1
  static void fused(long[] lo, long[] ro, long[] sizes, long L, long R) {
    long bad = 0, apart = -1, differ = 0; long s0 = sizes[0];
    for (int i = 1; i < lo.length; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = L - s, rs = R - s;
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
      long z = (a - lo[i - 1] - sizes[i - 1]) | (b - ro[i - 1] - sizes[i - 1]);
      apart &= z | -z;
      differ |= s ^ s0;
    }
    rBad = bad; rApart = apart; rDiffer = differ;
  }
  // two loops: bounds (as now) + join/differ loop with i-1 loads, branch-free
  static void joinsOnly(long[] lo, long[] ro, long[] sizes) {
    long apart = -1, differ = 0; long s0 = sizes[0];
    for (int i = 1; i < lo.length; i++) {
      long s = sizes[i - 1];
      long z = (lo[i] - lo[i - 1] - s) | (ro[i] - ro[i - 1] - s);
      apart &= z | -z;
      differ |= sizes[i] ^ s0;
    }
    rApart = apart; rDiffer = differ;
  }
  static void joinsTwoRefs(long[] lo, long[] loP, long[] ro, long[] roP, long[] sizes, long[] sizesP) {
    long apart = -1, differ = 0; long s0 = sizes[0];
    for (int i = 1; i < lo.length; i++) {
      long s = sizesP[i - 1];
      long z = (lo[i] - loP[i - 1] - s) | (ro[i] - roP[i - 1] - s);
      apart &= z | -z;
      differ |= sizes[i] ^ s0;
    }
    rApart = apart; rDiffer = differ;
  }
  static long[] eLo = new long[4096], eRo = new long[4096];
  static void joinsScratch(long[] lo, long[] ro, long[] sizes) {
    long[] el = eLo, er = eRo; int n = lo.length; long differ = 0; long s0 = sizes[0];
    for (int i = 0; i < n; i++) { long s = sizes[i]; el[i] = lo[i] + s; er[i] = ro[i] + s; differ |= s ^ s0; }
    long apart = -1;
    for (int i = 1; i < n; i++) { long z = (lo[i] - el[i - 1]) | (ro[i] - er[i - 1]); apart &= z | -z; }
    rApart = apart; rDiffer = differ;
  }
  static void andRed(long[] lo, long[] ro, long[] sizes) {
    long apart = -1;
    for (int i = 0; i < lo.length; i++) { long z = (lo[i] - sizes[i]) | (ro[i] - sizes[i]); apart &= z | -z; }
    rApart = apart;
  }
  static void orShift(long[] lo, long[] ro, long[] sizes) {
    long acc = 0;
    for (int i = 1; i < lo.length; i++) { long z = (lo[i] - lo[i - 1] - sizes[i - 1]) | (ro[i] - ro[i - 1] - sizes[i - 1]); acc |= ~(z | -z); }
    rApart = acc;
  }
  static void minRed(long[] lo, long[] ro, long[] sizes) {
    long m = Long.MAX_VALUE;
    for (int i = 1; i < lo.length; i++) { long z = (lo[i] - lo[i - 1] - sizes[i - 1]) | (ro[i] - ro[i - 1] - sizes[i - 1]); m = Math.min(m, z ^ (z >> 63)); }
    rApart = m;
  }
  static long rDiff2;
  static long outOfBounds2(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    long bad = 0, differ = 0; long s0 = sizes[0];
    for (int i = 0; i < lo.length; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
      differ |= s ^ s0;
    }
    rDiff2 = differ;
    return bad;
  }
  static int nw(long[] lo, long[] ro, long[] sizes, long L, long R) {
    if (outOfBounds2(lo, ro, sizes, L, R) < 0) return -1;
    int n = lo.length; long s0 = sizes[0]; int joined = 0;
    if (rDiff2 == 0) {
      long endLo = lo[0] + s0, endRo = ro[0] + s0;
      for (int i = 1; i < n; i++) {
        long a = lo[i], b = ro[i];
        if (a == endLo && b == endRo) joined++;
        endLo = a + s0; endRo = b + s0;
      }
      return joined;
    }
    long endLo = lo[0] + s0, endRo = ro[0] + s0;
    for (int i = 1; i < n; i++) {
      long a = lo[i], b = ro[i], s = sizes[i];
      if (a == endLo && b == endRo) joined++;
      endLo = a + s; endRo = b + s;
    }
    return joined + (1 << 20);
  }
  static int nw2(long[] lo, long[] ro, long[] sizes, long L, long R) {
    if (outOfBounds2(lo, ro, sizes, L, R) < 0) return -1;
    int n = lo.length; long s0 = sizes[0]; int joined = 0;
    long pl = lo[0], pr = ro[0];
    for (int i = 1; i < n; i++) {
      long a = lo[i], b = ro[i];
      if (((a - pl) ^ s0 | (b - pr) ^ s0) == 0) joined++;
      pl = a; pr = b;
    }
    return joined;
  }
  static int nw3(long[] lo, long[] ro, long[] sizes, long L, long R) {
    if (outOfBounds2(lo, ro, sizes, L, R) < 0) return -1;
    int n = lo.length; long s0 = sizes[0]; int joined = 0;
    if (rDiff2 == 0) {
      long endLo = lo[0] + s0;
      for (int i = 1; i < n; i++) {
        long a = lo[i];
        if (a == endLo && ro[i] == ro[i - 1] + s0) joined++;
        endLo = a + s0;
      }
      return joined;
    }
    long endLo = lo[0] + s0;
    for (int i = 1; i < n; i++) {
      long a = lo[i];
      if (a == endLo && ro[i] == ro[i - 1] + sizes[i - 1]) joined++;
      endLo = a + sizes[i];
    }
    return joined + (1 << 20);
  }
  public static void main(String[] x) {
    int n = 4096; long B = 4096; long[] off = new long[n], sz = new long[n];
    for (int i = 0; i < n; i++) { off[i] = (long) (n - 1 - i) * 2 * B; sz[i] = B; }
    long L = 2L * n * B;
    long sink = 0; int R = 200000; long[] t = new long[R];
    String which = x[0];
    for (int k = 0; k < R; k++) {
      long a = System.nanoTime();
      switch (which) {
        case "cur" -> sink += cur(off, off, sz, L, L);
        case "fused" -> { fused(off, off, sz, L, L); sink += rBad + rApart + rDiffer; }
        case "bounds" -> sink += outOfBounds(off, off, sz, L, L);
        case "joins" -> { joinsOnly(off, off, sz); sink += rApart + rDiffer; }
        case "tworefs" -> { joinsTwoRefs(off, off, off, off, sz, sz); sink += rApart + rDiffer; }
        case "scratch" -> { joinsScratch(off, off, sz); sink += rApart + rDiffer; }
        case "andred" -> { andRed(off, off, sz); sink += rApart; }
        case "orshift" -> { orShift(off, off, sz); sink += rApart; }
        case "minred" -> { minRed(off, off, sz); sink += rApart; }
        case "new" -> sink += nw(off, off, sz, L, L);
        case "new2" -> sink += nw2(off, off, sz, L, L);
        case "bounds2" -> sink += outOfBounds2(off, off, sz, L, L) + rDiff2;
        case "new3" -> sink += nw3(off, off, sz, L, L);
        case "two" -> { sink += outOfBounds(off, off, sz, L, L); joinsOnly(off, off, sz); sink += rApart + rDiffer; }
      }
      t[k] = System.nanoTime() - a;
    }
    long[] y = Arrays.copyOfRange(t, R / 2, R); Arrays.sort(y);
    System.out.printf("%-7s p50 %.2f us p10 %.2f (sink %d)%n", which, y[y.length / 2] / 1e3, y[y.length / 10] / 1e3, sink & 1);
  }
}
