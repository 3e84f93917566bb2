package org.mori4j.bench;

import com.typesafe.config.ConfigFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.Supplier;
import org.mori4j.io.PollCqMode;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.transport.TransportException;
import org.mori4j.transport.rdma.RdmaProviders;
import org.mori4j.transport.rdma.verbs.VerbsProvider;
import picocli.CommandLine.Option;

/**
 * The RDMA flags shared by {@code bench --backend rdma} and {@code serve --backend rdma}: the verbs provider
 * ({@code --rdma-provider}, default the configured {@code mori4j.rdma.provider}, env
 * {@code MORI4J_RDMA_PROVIDER}) and MORI's {@code qpPerTransfer} and {@code pollCqMode}; unset, the backend
 * keeps {@code mori4j.rdma} of {@code reference.conf}. The engine reads its provider from its ActorSystem's
 * configuration, not from {@link RdmaBackendConfig}, so the chosen provider reaches an engine as the system
 * property {@value #PROVIDER_PROPERTY}: set in this JVM just around {@code IoEngine.create}
 * ({@link #withProvider}) and given to a child JVM as {@code -D}. The provider is resolved before anything
 * starts: {@code auto} or {@code ibverbs} on a machine without an RDMA device is a usage error that says to
 * pass {@code --rdma-provider software}, and the software provider (a user-space RDMA device over TCP) is
 * labelled emulation wherever its figures appear.
 */
public final class RdmaFlags {
  /** The configuration path (and system property) of the provider, read by the engine when it creates an RDMA backend. */
  static final String PROVIDER_PROPERTY = "mori4j.rdma.provider";

  @Option(names = "--rdma-provider", paramLabel = "auto|ibverbs|software",
      description = "With --backend rdma: the verbs provider. auto and ibverbs need an RDMA device; software is a user-space RDMA "
          + "device over TCP (emulation, not NIC performance) (default: mori4j.rdma.provider, env MORI4J_RDMA_PROVIDER, i.e. auto).")
  String provider;

  @Option(names = "--qp-per-transfer", paramLabel = "N",
      description = "With --backend rdma: queue pairs per remote engine and device (default: mori4j.rdma in reference.conf).")
  Integer qpPerTransfer;

  @Option(names = "--poll-cq-mode", paramLabel = "POLLING|EVENT",
      description = "With --backend rdma: completion queue polling, POLLING or EVENT (default: mori4j.rdma in reference.conf).")
  String pollCqMode;

  /**
   * The provider a run uses and how its figures are labelled.
   *
   * @param name     {@code ibverbs} or {@code software} (auto already resolved)
   * @param devices  the RDMA devices the provider lists (ibverbs), empty for software
   * @param label    how every table, row and JSON record names the backend, e.g. {@code rdma (software provider: emulation)}
   */
  public record Provider(String name, List<String> devices, String label) {
    public boolean emulated() {
      return name.equals("software");
    }
  }

  /** True when any RDMA flag was given (they need {@code --backend rdma}). */
  boolean anyGiven() {
    return provider != null || qpPerTransfer != null || pollCqMode != null;
  }

  /** The first RDMA flag given, for "needs --backend rdma" messages. */
  String firstGiven() {
    if (provider != null) return "--rdma-provider " + provider;
    if (qpPerTransfer != null) return "--qp-per-transfer " + qpPerTransfer;
    return "--poll-cq-mode " + pollCqMode;
  }

  /** The label of the software provider's figures. */
  static final String SOFTWARE_LABEL = "rdma (software provider: emulation)";

  /** The configured provider: {@code mori4j.rdma.provider} (system property, then {@code MORI4J_RDMA_PROVIDER}, then reference.conf). */
  static String configuredProvider() {
    com.typesafe.config.Config c = ConfigFactory.load();
    // the engine's own default when the key is absent (an engine-actors jar older than the RDMA backend)
    return c.hasPath(PROVIDER_PROPERTY) ? c.getString(PROVIDER_PROPERTY) : "auto";
  }

  /**
   * The engine's own choice for a provider name ({@link RdmaProviders#select}), so that this command refuses
   * exactly what {@code createBackend(RDMA)} would refuse, for the same reason.
   */
  static VerbsProvider engineChoice(String name) {
    return RdmaProviders.select(name, "127.0.0.1", null);
  }

  /**
   * Checks the flags and resolves the provider; {@code usage} makes the error (exit 2) for a bad value, naming
   * the flag (or the setting it came from) and the value. {@code select} is the engine's choice for a provider
   * name ({@link #engineChoice}); its "no RDMA device" refusal becomes a usage error that says to pass
   * {@code --rdma-provider software}.
   */
  Provider resolve(Function<String, ? extends RuntimeException> usage, Function<String, VerbsProvider> select) {
    config(usage);
    String source = provider != null ? "--rdma-provider" : PROVIDER_PROPERTY + " (MORI4J_RDMA_PROVIDER)";
    String value = provider != null ? provider : configuredProvider();
    String p = value.trim().toLowerCase(Locale.ROOT);
    switch (p) {
      case "software" -> {
        // named, so emulation is what was asked for; the device itself is opened by each engine
        return new Provider("software", List.of(), SOFTWARE_LABEL);
      }
      case "auto", "ibverbs" -> {
        VerbsProvider chosen;
        try {
          chosen = select.apply(p);
        } catch (TransportException e) {
          throw usage.apply("--backend rdma with " + source + " " + value + ": " + e.getMessage()
              + "; pass --rdma-provider software to run on the software provider (a user-space RDMA device over TCP: emulation, not NIC performance)");
        }
        if (chosen.emulated()) return new Provider(chosen.name(), List.of(), SOFTWARE_LABEL);
        List<String> devices = List.copyOf(chosen.deviceNames());
        return new Provider(chosen.name(), devices, "rdma (" + chosen.name() + " provider: " + String.join(",", devices) + ")");
      }
      default -> throw usage.apply(source + " must be auto, ibverbs or software: '" + value + "'");
    }
  }

  /** The backend configuration these flags select; a bad value is a usage error naming the flag. */
  RdmaBackendConfig config(Function<String, ? extends RuntimeException> usage) {
    RdmaBackendConfig d;
    try {
      d = RdmaBackendConfig.defaults(); // checks every mori4j.rdma key (RdmaOptions): a bad one is this command's usage error too
    } catch (IllegalArgumentException e) {
      throw usage.apply(e.getMessage());
    }
    int qp = d.qpPerTransfer();
    if (qpPerTransfer != null) {
      if (qpPerTransfer < 1) throw usage.apply("--qp-per-transfer must be at least 1: " + qpPerTransfer);
      qp = qpPerTransfer;
    }
    PollCqMode mode = d.pollCqMode();
    if (pollCqMode != null) {
      try {
        mode = PollCqMode.valueOf(pollCqMode.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw usage.apply("--poll-cq-mode must be POLLING or EVENT: '" + pollCqMode + "'");
      }
    }
    return new RdmaBackendConfig(qp, d.postBatchSize(), d.numWorkerThreads(), mode, d.enableNotification());
  }

  /** The flags to hand to a child {@code serve} so that both ends use the same queue pairs and polling; the provider goes as {@link #jvmArgs}. */
  List<String> asArgs() {
    List<String> a = new ArrayList<>();
    if (qpPerTransfer != null) a.addAll(List.of("--qp-per-transfer", qpPerTransfer.toString()));
    if (pollCqMode != null) a.addAll(List.of("--poll-cq-mode", pollCqMode));
    return a;
  }

  /** The child JVM's flag that makes its engine use {@code p}, the same provider as this side. */
  static List<String> jvmArgs(Provider p) {
    return List.of("-D" + PROVIDER_PROPERTY + "=" + p.name());
  }

  /**
   * Runs {@code create} (an {@code IoEngine.create}) with the engine configuration naming provider {@code p}:
   * the engine's ActorSystem reads {@link #PROVIDER_PROPERTY} from {@code ConfigFactory.load()} when it is
   * created and keeps it, so the system property is set only for that call and put back afterwards (a test
   * JVM runs other engines after this one).
   */
  static <T> T withProvider(Provider p, Supplier<T> create) {
    synchronized (RdmaFlags.class) {
      String before = System.getProperty(PROVIDER_PROPERTY);
      System.setProperty(PROVIDER_PROPERTY, p.name());
      ConfigFactory.invalidateCaches();
      try {
        return create.get();
      } finally {
        if (before == null) System.clearProperty(PROVIDER_PROPERTY);
        else System.setProperty(PROVIDER_PROPERTY, before);
        ConfigFactory.invalidateCaches();
      }
    }
  }
}
