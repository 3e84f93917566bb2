package org.mori4j.bench.soak;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code mori4j soak}: three node JVMs in one cluster run a mixed, fully checked workload while a chaos loop
 * partitions, kills, stalls and shapes them ({@link SoakRun}); prints the report ({@link SoakReport}) and
 * optionally writes it as JSON. Exit codes: 0 every must-be-zero count was zero and no JVM grew past a
 * bound, 1 a violation (listed at the end of the report) or a run that could not be carried out, 2 a usage
 * error.
 */
@Command(name = "soak", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Fault-injection soak: 3 cluster JVMs, mixed checked workload, kill/partition/stall/delay faults; reports corrupted, hung, lost notifications, resource growth.")
public final class SoakCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--minutes", defaultValue = "2", paramLabel = "N",
      description = "Length of the run, start-up included (default: ${DEFAULT-VALUE}; at least 1.5).")
  double minutes;

  @Option(names = "--seed", paramLabel = "S", description = "Seed of the data patterns and the workload's choices (default: random, printed).")
  Long seed;

  @Option(names = "--json", paramLabel = "FILE", description = "Also write the report as JSON to FILE.")
  Path json;

  @Option(names = "--log-dir", paramLabel = "DIR", description = "Where each node JVM's stderr goes (default: a new temporary directory).")
  Path logDir;

  @Option(names = "--no-namespaces", description = "Run the nodes on loopback even where network namespaces could be made (no partition, no delay/loss).")
  boolean noNamespaces;

  void validate() {
    if (!(minutes >= 1.5) || minutes > 24 * 60)
      throw new ParameterException(spec.commandLine(), "--minutes must be between 1.5 and 1440: " + minutes);
    if (logDir != null && Files.exists(logDir) && !Files.isDirectory(logDir))
      throw new ParameterException(spec.commandLine(), "--log-dir is not a directory: " + logDir);
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    validate();
    long s = seed != null ? seed : new SplittableRandom().nextLong();
    Path logs = logDir != null ? Files.createDirectories(logDir) : Files.createTempDirectory("mori4j-soak-");
    PrintStream out = System.out;
    System.err.printf("mori4j soak: %s minutes, seed %d, node logs in %s%n", minutes, s, logs);
    SoakReport report = SoakRun.run(minutes, s, logs, !noNamespaces, System.err);
    report.header.put("command", "mori4j soak --minutes " + minutes + " --seed " + s + (noNamespaces ? " --no-namespaces" : ""));
    out.print(report.render());
    out.flush();
    if (json != null) {
      Files.writeString(json, report.json());
      System.err.println("wrote " + json);
    }
    return report.violations().isEmpty() ? 0 : 1;
  }
}
