package org.mori4j.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Fresh PKCS12 key and trust stores made at test time with the JDK's own {@code keytool}, so no key material
 * is checked in: a certificate authority, members whose certificates it signs (each with a SAN for
 * 127.0.0.1, so hostname verification can be on), a trust store holding only the CA, and self-signed
 * stores that no member trusts. The keytool commands run in this JVM ({@code sun.security.tools.keytool.Main}, opened
 * to the tests by the cluster module's surefire {@code --add-exports}): some twenty of them, each a JVM start as a
 * separate process, took 8-17 s of the module's test time. Where that package is not opened (a run outside Maven),
 * they run as {@code keytool} processes, as before.
 */
final class TestKeyStores {
  static final String PASSWORD = "mori4j-test-pass";
  private static final String KEYTOOL = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();

  private final Path dir;
  private final Path caStore;
  private final Path caCert;
  private final Path trustStore;

  /** Creates the CA and the trust store in {@code dir}. */
  TestKeyStores(Path dir) throws IOException {
    this.dir = dir;
    this.caStore = dir.resolve("ca.p12");
    this.caCert = dir.resolve("ca.cer");
    this.trustStore = dir.resolve("truststore.p12");
    keytool("-genkeypair", "-alias", "ca", "-dname", "CN=mori4j test CA", "-ext", "bc:c", "-keystore", caStore);
    keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", caStore, "-file", caCert);
    keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCert, "-keystore", trustStore);
  }

  /** The trust store: the CA's certificate only. */
  Path trustStore() {
    return trustStore;
  }

  /** A member's key store: its own key pair, its certificate signed by the CA for 127.0.0.1 and localhost, and the CA's certificate. */
  Path member(String name) throws IOException {
    return member(name, "IP:127.0.0.1,DNS:localhost");
  }

  /** {@link #member(String)} with the certificate issued for {@code subjectAltNames} (keytool's SAN syntax). */
  Path member(String name, String subjectAltNames) throws IOException {
    Path ks = dir.resolve(name + ".p12");
    Path csr = dir.resolve(name + ".csr");
    Path cer = dir.resolve(name + ".cer");
    keytool("-genkeypair", "-alias", name, "-dname", "CN=" + name, "-keystore", ks);
    keytool("-certreq", "-alias", name, "-keystore", ks, "-file", csr);
    keytool("-gencert", "-rfc", "-alias", "ca", "-keystore", caStore, "-infile", csr, "-outfile", cer,
        "-ext", "SAN=" + subjectAltNames);
    keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caCert, "-keystore", ks);
    keytool("-importcert", "-alias", name, "-file", cer, "-keystore", ks);
    return ks;
  }

  /** A key store with a self-signed certificate that the CA never signed: a stranger to the cluster. */
  Path stranger(String name) throws IOException {
    Path ks = dir.resolve(name + ".p12");
    keytool("-genkeypair", "-alias", name, "-dname", "CN=" + name, "-ext", "SAN=IP:127.0.0.1", "-keystore", ks);
    return ks;
  }

  /** keytool's {@code run(String[], PrintStream)}, or null when its package is not opened to this module. */
  private static final java.lang.reflect.Method IN_PROCESS = keytoolRun();

  private static java.lang.reflect.Method keytoolRun() {
    try {
      Class<?> main = Class.forName("sun.security.tools.keytool.Main");
      if (!main.getModule().isExported(main.getPackageName(), TestKeyStores.class.getModule())) return null;
      return main.getMethod("run", String[].class, java.io.PrintStream.class);
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }

  /** The command without its program name, through a fresh keytool instance; its exit code and output as the process gives them. */
  private static void inProcess(List<String> cmd) throws IOException {
    java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
    int code;
    try (java.io.PrintStream out = new java.io.PrintStream(buf, true, StandardCharsets.UTF_8)) {
      Object tool = IN_PROCESS.getDeclaringClass().getConstructor().newInstance();
      code = (Integer) IN_PROCESS.invoke(tool, (Object) cmd.subList(1, cmd.size()).toArray(String[]::new), out);
    } catch (java.lang.reflect.InvocationTargetException e) {
      throw new IOException("keytool failed: " + cmd + "\n" + buf.toString(StandardCharsets.UTF_8), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IOException("keytool could not run in this JVM: " + cmd, e);
    }
    if (code != 0) throw new IOException("keytool failed (" + code + "): " + cmd + "\n" + buf.toString(StandardCharsets.UTF_8));
  }

  private static void keytool(Object... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(KEYTOOL));
    for (Object a : args) cmd.add(a.toString());
    // EC keys: generated in milliseconds, where RSA keys cost noticeable CPU on a small test machine
    if (cmd.contains("-genkeypair")) cmd.addAll(List.of("-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2"));
    if (cmd.contains("-gencert")) cmd.addAll(List.of("-validity", "2"));
    cmd.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD));
    if (cmd.contains("-genkeypair")) cmd.addAll(List.of("-keypass", PASSWORD));
    if (IN_PROCESS != null) {
      inProcess(cmd);
      return;
    }
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
