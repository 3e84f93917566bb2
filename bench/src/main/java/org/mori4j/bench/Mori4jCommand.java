package org.mori4j.bench;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code mori4j} command line: {@code bench} measures transfers between two processes and prints MORI's
 * table with baselines beside it, {@code serve} runs a standalone target for it, {@code node} runs a member of
 * a mori4j cluster with an engine, and {@code cluster-bench} measures against a node found through the
 * cluster, {@code info} prints this host's RDMA devices, GPUs and the backends an engine would start, and
 * {@code shmem-bench} measures the shmem collectives beside NCCL, {@code plot} draws recorded results as SVG,
 * {@code soak} runs three cluster nodes under injected faults and checks every byte, {@code xgmi-pairs} measures
 * XGMI between every pair of GPUs at once. Exit codes: 0 success,
 * 1 a failed run (a transfer error or wrong bytes), 2 a usage error (message names the flag and value).
 */
@Command(name = "mori4j", mixinStandardHelpOptions = true, versionProvider = Mori4jCommand.Version.class,
    subcommands = {BenchCommand.class, ServeCommand.class, NodeCommand.class, ClusterBenchCommand.class, InfoCommand.class,
        ShmemBenchCommand.class, PlotCommand.class, org.mori4j.bench.soak.SoakCommand.class, org.mori4j.bench.kv.KvBenchCommand.class, RegistrationBenchCommand.class,
        XgmiPairsCommand.class, XgmiPairsMemberLoop.class, CommandLine.HelpCommand.class},
    description = "mori4j: MORI-IO's transfer engine on the JVM. Commands: bench, serve, node, cluster-bench, info, shmem-bench, plot, soak, kv-bench, register-bench, xgmi-pairs.")
public final class Mori4jCommand implements Runnable {
  @Spec CommandSpec spec;

  /** The version from the jar manifest, when there is one. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Mori4jCommand.class.getPackage().getImplementationVersion();
      return new String[] {"mori4j " + (v != null ? v : "(development build)")};
    }
  }

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "missing command: bench, serve, node, cluster-bench, info, shmem-bench, plot or soak");
  }

  /** A command line with the error handling of the real program, for {@link #main} and tests. */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new Mori4jCommand());
    cl.setExecutionExceptionHandler((ex, line, parseResult) -> {
      // an unexpected failure: the message first, the stack only where it helps (no message)
      PrintWriter err = line.getErr();
      err.println("mori4j " + line.getCommandName() + ": error: " + (ex.getMessage() != null ? ex.getMessage() : ex));
      if (ex.getMessage() == null || Boolean.getBoolean("mori4j.debug")) ex.printStackTrace(err);
      err.flush();
      return 1;
    });
    return cl;
  }

  public static void main(String[] args) {
    // logging set up before any thread logs: otherwise SLF4J replays those early calls with a warning of its own
    org.slf4j.LoggerFactory.getILoggerFactory();
    System.exit(commandLine().execute(args));
  }
}
