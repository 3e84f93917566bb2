package org.mori4j.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import org.mori4j.natives.gpu.GpuRuntime;
import picocli.CommandLine.Command;

/**
 * The line protocol one {@code xgmi-pairs} engine is driven by, the same in a child JVM (the hidden command
 * {@code xgmi-pairs-engine}, on stdin/stdout) and in the coordinator's JVM (a thread per engine, on queues), so
 * that {@code --single-process} and one JVM per engine differ only in where the engines live. Commands, one per line:
 * {@code START index device sourceBytes destinationBytes host}, {@code PEERS host:port,...} (every engine's address,
 * by index), {@code ROW pattern engines blockBytes blocks stride seed}, {@code GO releaseNanos}, {@code CHECK},
 * {@code PATHS}, {@code EXIT}. Every reply is one line starting with {@value #PREFIX} ({@code READY host:port},
 * {@code OK [text]}, {@code DONE endNanos lateNanos}, {@code BAD what}, {@code ERR what}), so that anything else a
 * library prints on stdout is ignored. A failed command answers {@code ERR} and the engine stays up until
 * {@code EXIT} or the end of input, which closes it.
 */
@Command(name = "xgmi-pairs-engine", hidden = true, description = "One engine of xgmi-pairs, driven on stdin/stdout (started by xgmi-pairs).")
final class XgmiPairsMemberLoop implements Callable<Integer> {
  static final String PREFIX = "M4JP ";

  @Override
  public Integer call() {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    serve(() -> {
      try {
        return in.readLine();
      } catch (IOException e) {
        return null; // a broken stdin means the coordinator is gone: stop as on EOF
      }
    }, line -> {
      System.out.println(line);
      System.out.flush();
    }, BenchGpu.runtime());
    return 0;
  }

  /** A source of command lines; null at the end of input. */
  interface Commands {
    String next();
  }

  /** Serves commands until {@code EXIT} or the end of input; the engine is closed either way. */
  static void serve(Commands in, Consumer<String> out, GpuRuntime gpu) {
    XgmiPairsMember member = null;
    try {
      for (String line; (line = in.next()) != null; ) {
        String[] w = line.trim().split(" ");
        if (w[0].equals("EXIT")) break;
        try {
          switch (w[0]) {
            case "START" -> {
              if (member != null) throw new IllegalStateException("already started");
              member = new XgmiPairsMember(Integer.parseInt(w[1]), Integer.parseInt(w[2]), gpu, Long.parseLong(w[3]), Long.parseLong(w[4]), w[5]);
              out.accept(PREFIX + "READY " + member.engineDesc().host() + ":" + member.engineDesc().port());
            }
            case "PEERS" -> {
              started(member).connect(List.of(w[1].split(",")));
              out.accept(PREFIX + "OK");
            }
            case "ROW" -> {
              XgmiPairsLayout layout = XgmiPairsLayout.of(XgmiPairsLayout.Pattern.valueOf(w[1]), Integer.parseInt(w[2]),
                  new XgmiPairsLayout.Shape(Long.parseLong(w[3]), Integer.parseInt(w[4]), Long.parseLong(w[5])));
              started(member).prepare(layout, Long.parseLong(w[6]));
              out.accept(PREFIX + "OK");
            }
            case "GO" -> {
              long[] r = started(member).iterate(Long.parseLong(w[1]));
              out.accept(PREFIX + "DONE " + r[0] + " " + r[1]);
            }
            case "CHECK" -> {
              String bad = started(member).check();
              out.accept(PREFIX + (bad == null ? "OK" : "BAD " + oneLine(bad)));
            }
            case "PATHS" -> out.accept(PREFIX + "OK " + oneLine(started(member).paths()));
            default -> throw new IllegalArgumentException("unknown command '" + line + "'");
          }
        } catch (RuntimeException e) {
          out.accept(PREFIX + "ERR " + oneLine(e.getMessage() != null ? e.getMessage() : e.toString()));
        }
      }
    } finally {
      if (member != null) member.close();
    }
  }

  private static XgmiPairsMember started(XgmiPairsMember m) {
    if (m == null) throw new IllegalStateException("no engine: START first");
    return m;
  }

  static String oneLine(String s) {
    return s.replace('\n', ' ').replace('\r', ' ');
  }
}
