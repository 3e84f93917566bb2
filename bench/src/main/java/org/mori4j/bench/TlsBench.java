package org.mori4j.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TcpTlsConfig;

/**
 * {@code mori4j bench --tls}: the sweep over plain TCP and over TLS 1.3 in the same run, point by point in
 * turn (plain, then TLS, for each size) so that both see the same machine. Two targets are started (child
 * {@code serve}s, one plain, one with TLS) and this JVM runs two engines, one of each kind. The key material
 * is a throwaway self-signed EC P-256 key made with the JDK's {@code keytool} in a temporary directory (SAN
 * IP:127.0.0.1, valid 2 days, deleted at the end): the cost measured is the data path's, not a certificate
 * chain's. The output is both tables and, per size, TLS's average bandwidth as a share of plain TCP's.
 */
final class TlsBench {
  private static final String PASSWORD = "mori4j-bench-throwaway";

  private TlsBench() {}

  /** What {@code bench} hands over: the plan, the sweep flags, the TCP flags and where to write JSON. */
  record Settings(SweepPlan plan, SweepOptions sweep, TcpOptions tcp, String host, Path json) {}

  static int run(Settings s, PrintStream out) throws Exception {
    Path dir = Files.createTempDirectory("mori4j-bench-tls");
    Path store = dir.resolve("bench.p12");
    TargetProcess plainTarget = null;
    TargetProcess tlsTarget = null;
    try {
      keytool(store);
      List<String> common = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0", "--buffer-size", Long.toString(s.plan().bufferBytes())));
      common.addAll(s.tcp().asArgs());
      plainTarget = TargetProcess.start(common, Duration.ofSeconds(60), System.err);
      List<String> tlsArgs = new ArrayList<>(common);
      tlsArgs.addAll(List.of("--tls-key-store", store.toString(), "--tls-store-password", PASSWORD));
      tlsTarget = TargetProcess.start(tlsArgs, Duration.ofSeconds(60), System.err);
      TcpBackendConfig plainConfig = s.tcp().config().withTls(TcpTlsConfig.off());
      TcpBackendConfig tlsConfig = s.tcp().config().withTls(TcpTlsConfig.on(store, PASSWORD, store, PASSWORD));
      SweepOptions w = s.sweep();
      out.printf(Locale.ROOT, "mori4j bench --tls: backend=tcp op=%s batch-transfer=%s session=%s iters=%d warmup=%d/%dms points=%d%n",
          w.op.name().toLowerCase(Locale.ROOT), w.batchTransfer, w.session, w.iters, w.warmupIters, w.warmupMs, s.plan().points().size());
      out.printf(Locale.ROOT, "  plain target %s:%d, TLS target %s:%d (child JVMs), tcp %s%n", plainTarget.ready().host(),
          plainTarget.ready().port(), tlsTarget.ready().host(), tlsTarget.ready().port(), plainConfig);
      out.printf(Locale.ROOT, "  TLS: TLSv1.3, cipher suites %s (in preference order), throwaway self-signed EC P-256 key, mutual "
          + "authentication, hostname verification on%n", String.join(", ", org.mori4j.transport.tcp.TcpTls.CIPHER_SUITES));
      out.flush();
      List<ResultRow> plainRows = new ArrayList<>();
      List<ResultRow> tlsRows = new ArrayList<>();
      try (BenchBuffers buffers = new BenchBuffers();
           IoEngine plain = IoEngine.create("bench-plain-" + ProcessHandle.current().pid(), new IoEngineConfig(s.host(), 0));
           IoEngine tls = IoEngine.create("bench-tls-" + ProcessHandle.current().pid(), new IoEngineConfig(s.host(), 0))) {
        plain.createBackend(BackendType.TCP, plainConfig);
        tls.createBackend(BackendType.TCP, tlsConfig);
        EngineBenchmark pb = benchmark(plain, plainTarget, buffers, s);
        EngineBenchmark tb = benchmark(tls, tlsTarget, buffers, s);
        ProgressBar progress = ProgressBar.forConsole(2 * s.plan().points().size());
        try {
          TargetProcess pt = plainTarget, tt = tlsTarget;
          for (SweepPlan.Point p : s.plan().points()) {
            plainRows.addAll(pb.sweep(List.of(p), w.iters, w.warmupIters, w.warmupNanos(), progress, "plain ", () -> alive(pt)));
            tlsRows.addAll(tb.sweep(List.of(p), w.iters, w.warmupIters, w.warmupNanos(), progress, "tls ", () -> alive(tt)));
          }
        } finally {
          progress.finish();
        }
        out.print(ResultTable.render(w.title("cpu memory") + " [plain TCP]", plainRows));
        out.print(ResultTable.render(w.title("cpu memory") + " [TLS 1.3]", tlsRows));
        out.println("path of every plain row: " + pb.pathLine());
        out.println("path of every TLS row: " + tb.pathLine());
      }
      out.println("Comparison (same run, TLS average bandwidth as a share of plain TCP's):");
      for (int i = 0; i < plainRows.size(); i++) {
        ResultRow p = plainRows.get(i), t = tlsRows.get(i);
        out.printf(Locale.ROOT, "  %s x %d: TLS %.3f GB/s = %.0f%% of plain %.3f GB/s (p50 %.1f us vs %.1f us)%n",
            HumanSize.format(p.msgSize()), p.batchSize(), t.avgBwGBps(), 100 * t.avgBwGBps() / Math.max(1e-12, p.avgBwGBps()),
            p.avgBwGBps(), t.p50LatUs(), p.p50LatUs());
      }
      if (s.json() != null) {
        JsonRows.write(s.json(), JsonRows.rowsToJson(plainRows, "tcp", "plain", false));
        Path tlsJson = s.json().resolveSibling(s.json().getFileName().toString().replaceFirst("(\\.json)?$", ".tls.json"));
        JsonRows.write(tlsJson, JsonRows.rowsToJson(tlsRows, "tcp", "tls1.3", false));
        System.err.println("wrote " + s.json() + " (plain) and " + tlsJson + " (TLS)");
      }
      return 0;
    } finally {
      if (tlsTarget != null) tlsTarget.close();
      if (plainTarget != null) plainTarget.close();
      try (var files = Files.walk(dir)) {
        for (Path f : files.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(f);
      }
    }
  }

  private static EngineBenchmark benchmark(IoEngine engine, TargetProcess target, BenchBuffers buffers, Settings s) {
    EngineDesc remoteEngine = engine.discover(target.ready().host(), target.ready().port());
    engine.registerRemoteEngine(remoteEngine);
    MemoryDesc remote = engine.lookupMemory(remoteEngine, ServeCommand.BUFFER_NAME)
        .orElseThrow(() -> new IllegalStateException("target " + remoteEngine.key() + " publishes no '" + ServeCommand.BUFFER_NAME + "'"));
    BenchMemory local = buffers.add(BenchMemory.host(engine, Math.min(s.plan().bufferBytes(), remote.size())));
    BenchMemory scratch = buffers.add(BenchMemory.host(engine, 2 * EngineBenchmark.SAMPLE_BYTES));
    return s.sweep().benchmark(engine, local, remote, scratch);
  }

  private static void alive(TargetProcess t) {
    if (!t.alive()) throw new IllegalStateException("target process died" + t.stderrTail());
  }

  private static void keytool(Path store) throws IOException, InterruptedException {
    String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
    Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "bench", "-dname", "CN=mori4j bench", "-ext",
        "SAN=IP:127.0.0.1,DNS:localhost", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2", "-storetype", "PKCS12",
        "-storepass", PASSWORD, "-keypass", PASSWORD, "-keystore", store.toString()).redirectErrorStream(true).start();
    String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("keytool did not finish in 60 s");
    }
    if (p.exitValue() != 0) throw new IOException("keytool failed (" + p.exitValue() + "): " + text);
  }
}
