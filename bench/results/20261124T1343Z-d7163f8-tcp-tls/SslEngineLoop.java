import javax.net.ssl.*; import java.nio.*; import java.security.*; import java.io.*;
public class SslEngineLoop {
  public static void main(String[] a) throws Exception {
    boolean direct = a[0].equals("direct"); String suite = a[1];
    KeyStore ks = KeyStore.getInstance("PKCS12"); ks.load(new FileInputStream("ks.p12"), "passpass".toCharArray());
    KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509"); kmf.init(ks, "passpass".toCharArray());
    TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX"); tmf.init(ks);
    SSLContext ctx = SSLContext.getInstance("TLSv1.3"); ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    SSLEngine c = ctx.createSSLEngine("127.0.0.1", 1), s = ctx.createSSLEngine(); c.setUseClientMode(true); s.setUseClientMode(false);
    c.setEnabledCipherSuites(new String[]{suite}); s.setEnabledCipherSuites(new String[]{suite});
    ByteBuffer cs = ByteBuffer.allocate(1<<18), sc = ByteBuffer.allocate(1<<18), app = ByteBuffer.allocate(1<<17), e = ByteBuffer.allocate(0);
    c.beginHandshake(); s.beginHandshake();
    for (int i = 0; i < 100; i++) { step(c, cs, sc, app, e); step(s, sc, cs, app, e); }
    System.out.println(c.getHandshakeStatus() + " " + s.getHandshakeStatus() + " " + c.getSession().getCipherSuite());
    int N = 64 << 20;
    ByteBuffer src = direct ? ByteBuffer.allocateDirect(N) : ByteBuffer.allocate(N), dst = direct ? ByteBuffer.allocateDirect(N + (1<<17)) : ByteBuffer.allocate(N + (1<<17));
    ByteBuffer net = direct ? ByteBuffer.allocateDirect(1<<18) : ByteBuffer.allocate(1<<18);
    for (int r = 0; r < 10; r++) {
      src.clear(); dst.clear(); long wrapNs = 0, unNs = 0;
      net.clear();
      while (src.hasRemaining()) {
        long t0 = System.nanoTime();
        while (src.hasRemaining() && net.remaining() >= 16709) c.wrap(src, net);
        long t1 = System.nanoTime(); net.flip();
        while (net.hasRemaining()) { SSLEngineResult res = s.unwrap(net, dst); if (res.bytesConsumed()==0) break; }
        net.compact();
        unNs += System.nanoTime() - t1; wrapNs += t1 - t0;
      }
      System.out.printf("%s %s wrap %.2f GB/s unwrap %.2f GB/s%n", direct?"direct":"heap", suite, N/(double)wrapNs, N/(double)unNs);
    }
  }
  static void step(SSLEngine e, ByteBuffer out, ByteBuffer in, ByteBuffer app, ByteBuffer empty) throws Exception {
    Runnable t; while ((t = e.getDelegatedTask()) != null) t.run();
    switch (e.getHandshakeStatus()) {
      case NEED_WRAP -> e.wrap(empty, out);
      case NEED_UNWRAP -> { in.flip(); e.unwrap(in, app); in.compact(); }
      default -> {}
    }
  }
}
