import java.lang.foreign.*;
import java.lang.invoke.MethodHandle;
import static java.lang.foreign.ValueLayout.*;

public class MhBench {
  static final Linker L = Linker.nativeLinker();
  static final MethodHandle STATIC = L.downcallHandle(L.defaultLookup().find("labs").orElseThrow(), FunctionDescriptor.of(JAVA_LONG, JAVA_LONG));
  static final class Plain { final MethodHandle h; Plain(MethodHandle h) { this.h = h; } }
  record Rec(MethodHandle h) {}
  static final Plain PLAIN = new Plain(L.downcallHandle(L.defaultLookup().find("labs").orElseThrow(), FunctionDescriptor.of(JAVA_LONG, JAVA_LONG)));
  static final Rec REC = new Rec(L.downcallHandle(L.defaultLookup().find("labs").orElseThrow(), FunctionDescriptor.of(JAVA_LONG, JAVA_LONG)));

  static long viaStatic(long n) throws Throwable { long s = 0; for (long i = 0; i < n; i++) s += (long) STATIC.invokeExact(-i); return s; }
  static long viaPlain(long n) throws Throwable { long s = 0; for (long i = 0; i < n; i++) s += (long) PLAIN.h.invokeExact(-i); return s; }
  static long viaRec(long n) throws Throwable { long s = 0; for (long i = 0; i < n; i++) s += (long) REC.h.invokeExact(-i); return s; }

  public static void main(String[] a) throws Throwable {
    long n = 20_000_000;
    for (int round = 0; round < 5; round++) {
      long t0 = System.nanoTime(); long x = viaStatic(n); long t1 = System.nanoTime();
      long y = viaPlain(n); long t2 = System.nanoTime(); long z = viaRec(n); long t3 = System.nanoTime();
      System.out.printf("round %d static %.2f ns  plain-final %.2f ns  record %.2f ns (%d)%n", round, (t1 - t0) / (double) n, (t2 - t1) / (double) n, (t3 - t2) / (double) n, x + y + z);
    }
  }
}
