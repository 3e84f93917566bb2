package org.mori4j.io.internal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import java.net.InetAddress;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.StatusCode;
import org.mori4j.io.internal.metrics.MetricsSettings;

/**
 * How an engine comes to life for the facade: checks the key and config, reserves the key in this JVM (two open
 * engines with one key would answer each other's descriptors), reads the settings, builds the {@link TransferPath}
 * and starts the engine actor, in its own remoting ActorSystem or as a system actor of the application's. Every
 * setting is read and checked first, before the key is taken: a refused one is {@code ERR_INVALID_ARGS} naming the
 * engine, the setting, its environment variable and the value. A start that fails after that (a port in use, an
 * address that is not this machine's) gives the key back and throws an {@link IoEngineException} that names the key
 * and address ({@code ERR_TRANSPORT}; {@code ERR_BAD_STATE} for an application's system that refuses the actor); a
 * started one holds the key until {@link #releaseKey} at close.
 */
public final class EngineStart {
  /** Open engines' keys, each with the token of the start that holds it. */
  private static final ConcurrentHashMap<String, Object> KEYS = new ConcurrentHashMap<>();
  /** Keeps system actors' names unique: a closed engine's actor may still be stopping when its key is reused. */
  private static final AtomicLong INCARNATION = new AtomicLong();
  private static final String ENGINE_DISPATCHER = "mori4j.dispatchers.engine";

  /** What a start hands the facade; {@code keyToken} releases the key at close ({@link #releaseKey}). */
  public record Started(ActorSystem<?> system, boolean ownsSystem, ActorRef<IoEngineProtocol.Command> engine,
                        TransferPath path, EngineSettings settings, Object keyToken) {}

  private EngineStart() {}

  /** Starts an engine with its own ActorSystem whose remoting binds {@code config.host():config.port()}. */
  public static Started standalone(String key, IoEngineConfig config) {
    checkKey(key);
    if (config == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "config must not be null");
    Config base = ConfigFactory.load();
    Settings read = read(key, base, true);
    EngineSettings s = read.engine();
    Config cfg = ConfigFactory.empty()
        .withValue("pekko.actor.provider", ConfigValueFactory.fromAnyRef("remote"))
        .withValue("pekko.remote.artery.canonical.hostname", ConfigValueFactory.fromAnyRef(config.host()))
        .withValue("pekko.remote.artery.canonical.port", ConfigValueFactory.fromAnyRef(config.port()))
        .withFallback(base);
    Object token = reserve(key);
    ActorSystem<IoEngineProtocol.Command> sys = null;
    try {
      TransferPath path = new TransferPath(key, s.awaitSpinNanos(), read.metrics());
      path.defaultDeadlineNanos(read.deadlineNanos());
      sys = ActorSystem.create(Behaviors.setup(ctx -> {
        var addr = ctx.getSystem().address();
        EngineActor.Identity id = new EngineActor.Identity(key, nodeId(), addr.getHost().orElse(config.host()),
            (Integer) addr.getPort().orElse(config.port()), ProcessHandle.current().pid());
        return EngineActor.create(id, s, path, config.host());
      }), s.systemName(), cfg, Props.empty().withNext(DispatcherSelector.fromConfig(ENGINE_DISPATCHER)));
      path.meters().registerMBean();
      return new Started(sys, true, sys, path, s, token);
    } catch (RuntimeException ex) {
      if (sys != null) sys.terminate(); // started, then its meters failed: the system is this start's to stop
      releaseKey(key, token);
      // the settings were all read and checked above: what fails here is the ActorSystem's remoting (a port in use, a
      // host that does not resolve or is not this machine's) or the platform (JMX)
      throw new IoEngineException(StatusCode.ERR_TRANSPORT, "cannot start engine '" + key + "' on " + config.host() + ":" + config.port() + ": " + ex.getMessage(), ex);
    }
  }

  /** Starts an engine as a system actor of {@code system}, reachable from other processes only if it has remoting. */
  public static Started embedded(ActorSystem<?> system, String key, IoEngineConfig config) {
    checkKey(key);
    if (system == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "system must not be null");
    if (config == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "config must not be null");
    Settings read = read(key, system.settings().config(), false);
    EngineSettings s = read.engine();
    Object token = reserve(key);
    try {
      TransferPath path = new TransferPath(key, s.awaitSpinNanos(), read.metrics());
      path.defaultDeadlineNanos(read.deadlineNanos());
      var addr = system.address();
      EngineActor.Identity id = new EngineActor.Identity(key, nodeId(), addr.getHost().orElse(config.host()),
          (Integer) addr.getPort().orElse(config.port()), ProcessHandle.current().pid());
      ActorRef<IoEngineProtocol.Command> ref = system.systemActorOf(EngineActor.create(id, s, path, config.host()),
          "mori4j-engine-" + URLEncoder.encode(key, StandardCharsets.UTF_8) + "-" + INCARNATION.incrementAndGet(),
          DispatcherSelector.fromConfig(ENGINE_DISPATCHER));
      path.meters().registerMBean();
      return new Started(system, false, ref, path, s, token);
    } catch (RuntimeException ex) {
      releaseKey(key, token);
      throw new IoEngineException(StatusCode.ERR_BAD_STATE, "cannot start engine '" + key + "': " + ex.getMessage(), ex);
    }
  }

  /** What a start reads from the configuration, all of it checked before the key is taken or anything starts. */
  private record Settings(EngineSettings engine, MetricsSettings metrics, long deadlineNanos) {}

  /**
   * Reads and checks every setting an engine start uses, from {@code root}; {@code standalone}: also those of the
   * ActorSystem the start creates. A refused value is {@code ERR_INVALID_ARGS} naming the engine, the key, its
   * environment variable and the value ({@link SettingReads}), whichever section it is in.
   */
  private static Settings read(String key, Config root, boolean standalone) {
    try {
      EngineSettings s = EngineSettings.from(root);
      RdmaOptions.from(root); // a bad mori4j.rdma value fails the start, not the first createBackend(RDMA)
      PeerLiveness.probeInterval(root); // the engine actor reads it as it starts: a bad value would fail it unseen
      Settings read = new Settings(s, MetricsSettings.from(root), TransferDeadlines.defaultNanos(root));
      if (standalone) checkOwnSystem(root, s);
      return read;
    } catch (SettingReads.Refused e) {
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "cannot start engine '" + key + "': " + e.getMessage(), e);
    } catch (IllegalArgumentException | ConfigException e) {
      // every read above goes through SettingReads; this is for a check that one day does not
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "cannot start engine '" + key + "': a setting is refused: " + e.getMessage(), e);
    }
  }

  /**
   * The setting of a standalone engine's own ActorSystem that Pekko refuses as it starts, after the key was taken and
   * as an error that reads like a transport failure: the system's name (Pekko's rule, repeated here; an unknown
   * {@code pekko.loglevel} Pekko accepts, falling back to ERROR with a message of its own, so it is left to Pekko).
   */
  private static void checkOwnSystem(Config root, EngineSettings s) {
    if (!s.systemName().matches("^[a-zA-Z0-9][a-zA-Z0-9-_]*$"))
      throw SettingReads.section(root, "mori4j.engine").refused("system-name",
          "must be letters and digits, with '-' or '_' after the first (Pekko's rule for an ActorSystem's name)");
  }

  /** Frees {@code key} for a new engine, if {@code token}'s start still holds it. */
  public static void releaseKey(String key, Object token) {
    KEYS.remove(key, token);
  }

  private static void checkKey(String key) {
    if (key == null || key.isBlank()) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "engine key must not be null or blank: '" + key + "'");
    if (key.length() > 255) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "engine key longer than 255 characters: " + key.length());
  }

  private static Object reserve(String key) {
    Object token = new Object();
    if (KEYS.putIfAbsent(key, token) != null)
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "an engine with key '" + key + "' is already open in this JVM");
    return token;
  }

  private static String nodeId() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (Exception e) {
      return "unknown";
    }
  }
}
