public class Y {
  static long joinsA(long[] lo, long[] ro, long[] sizes) {
    int n = lo.length; long anyJoin = 0;
    for (int i = 0; i < n - 1; i++) {
      long d = (lo[i + 1] - lo[i] - sizes[i]) | (ro[i + 1] - ro[i] - sizes[i]);
      anyJoin |= (d - 1) & ~d;
    }
    return anyJoin;
  }
  static int branchy(long[] lo, long[] ro, long[] sizes) {
    int n = lo.length, joined = 0;
    for (int i = 0; i < n - 1; i++) if (lo[i + 1] == lo[i] + sizes[i] && ro[i + 1] == ro[i] + sizes[i]) joined++;
    return joined;
  }
  static int carried(long[] lo, long[] ro, long[] sizes) {
    int n = lo.length, joined = 0;
    long pl = lo[0] + sizes[0], pr = ro[0] + sizes[0];
    for (int i = 1; i < n; i++) {
      long a = lo[i], b = ro[i], s = sizes[i];
      if (a == pl && b == pr) joined++;
      pl = a + s; pr = b + s;
    }
    return joined;
  }
  static long localOnly(long[] lo, long[] sizes) {
    int n = lo.length; long any = 0;
    for (int i = 0; i < n - 1; i++) { long d = lo[i + 1] - lo[i] - sizes[i]; any |= (d - 1) & ~d; }
    return any;
  }
  static int localCarried(long[] lo, long[] sizes) {
    int n = lo.length; long pl = lo[0] + sizes[0]; int hits = 0;
    for (int i = 1; i < n; i++) { long a = lo[i]; if (a == pl) hits++; pl = a + sizes[i]; }
    return hits;
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
    for (int r = 0; r < 2; r++) {
      time("joinsA", () -> joinsA(off, off, sz));
      time("branchy", () -> branchy(off, off, sz));
      time("carried", () -> carried(off, off, sz));
      time("localOnly", () -> localOnly(off, sz));
      time("localCarried", () -> localCarried(off, sz));
    }
  }
}
