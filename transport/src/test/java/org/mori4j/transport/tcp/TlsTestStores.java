package org.mori4j.transport.tcp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * PKCS12 stores made at test time by the JDK's {@code keytool} (no key material is checked in), valid for 2
 * days from the run: {@code node} (self-signed, SAN IP:127.0.0.1 and DNS:localhost), {@code elsewhere}
 * (self-signed, SAN DNS:elsewhere.invalid only), both in the trust store, and {@code stranger} (self-signed,
 * SAN IP:127.0.0.1, trusted by nobody). EC P-256 keys: milliseconds to make, where RSA costs seconds of CPU.
 * Public for the engine's TLS tests (transport's test jar).
 */
public final class TlsTestStores {
  public static final String PASSWORD = "mori4j-test-pass";
  private static final String KEYTOOL = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();

  public final Path node;
  public final Path elsewhere;
  public final Path stranger;
  public final Path trust;

  public TlsTestStores(Path dir) throws IOException {
    node = dir.resolve("node.p12");
    elsewhere = dir.resolve("elsewhere.p12");
    stranger = dir.resolve("stranger.p12");
    trust = dir.resolve("trust.p12");
    // independent key pairs in parallel: each keytool is a JVM start of about a second on a small machine
    all(() -> gen("node", "IP:127.0.0.1,DNS:localhost", node),
        () -> gen("elsewhere", "DNS:elsewhere.invalid", elsewhere),
        () -> gen("stranger", "IP:127.0.0.1", stranger));
    all(() -> keytool("-exportcert", "-rfc", "-alias", "node", "-keystore", node, "-file", dir.resolve("node.cer")),
        () -> keytool("-exportcert", "-rfc", "-alias", "elsewhere", "-keystore", elsewhere, "-file", dir.resolve("elsewhere.cer")));
    keytool("-importcert", "-noprompt", "-alias", "node", "-file", dir.resolve("node.cer"), "-keystore", trust);
    keytool("-importcert", "-noprompt", "-alias", "elsewhere", "-file", dir.resolve("elsewhere.cer"), "-keystore", trust);
  }

  /** TLS settings presenting {@code keyStore}'s certificate and trusting the trust store's. */
  public TcpTls tls(Path keyStore) {
    return TcpTls.load(keyStore, PASSWORD, PASSWORD, trust, PASSWORD, true);
  }

  private interface Step {
    void run() throws IOException;
  }

  private static void all(Step... steps) throws IOException {
    List<CompletableFuture<Void>> fs = new ArrayList<>();
    for (Step s : steps) fs.add(CompletableFuture.runAsync(() -> {
      try {
        s.run();
      } catch (IOException e) {
        throw new CompletionException(e);
      }
    }));
    try {
      CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).join();
    } catch (CompletionException e) {
      throw new IOException(e.getCause());
    }
  }

  private static void gen(String name, String san, Path ks) throws IOException {
    keytool("-genkeypair", "-alias", name, "-dname", "CN=" + name, "-ext", "SAN=" + san, "-keyalg", "EC",
        "-groupname", "secp256r1", "-validity", "2", "-keypass", PASSWORD, "-keystore", ks);
  }

  private static void keytool(Object... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(KEYTOOL));
    for (Object a : args) cmd.add(a.toString());
    cmd.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out;
    try {
      out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException("keytool did not finish in 60 s: " + cmd);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while running keytool", e);
    }
    if (p.exitValue() != 0) throw new IOException("keytool failed (" + p.exitValue() + "): " + cmd + "\n" + out);
  }
}
