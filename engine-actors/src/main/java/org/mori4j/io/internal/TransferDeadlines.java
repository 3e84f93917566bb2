package org.mori4j.io.internal;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferOptions;
import org.mori4j.io.TransferStatus;

/**
 * Deadlines of transfers: one timer thread for the JVM (a daemon, started on the first deadline) that cancels a
 * transfer still in progress at its deadline with {@code ERR_TIMEOUT} (see {@link TransferStatusImpl#cancel}). A
 * transfer that completes first removes its timer entry, so the queue holds only transfers in flight. Transfers
 * without a deadline never touch the timer: the engine's default ({@code mori4j.engine.transfer-deadline}) is off
 * unless configured.
 */
public final class TransferDeadlines {
  private TransferDeadlines() {}

  private static final class Timer {
    static final ScheduledThreadPoolExecutor EXEC = create();

    private static ScheduledThreadPoolExecutor create() {
      ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "mori4j-transfer-deadlines");
        t.setDaemon(true);
        return t;
      });
      e.setRemoveOnCancelPolicy(true);
      return e;
    }
  }

  /** {@code mori4j.engine.transfer-deadline} of {@code root}: 0 for {@code off}, else a positive number of nanoseconds. */
  public static long defaultNanos(Config root) {
    String path = "mori4j.engine.transfer-deadline";
    if (!root.hasPath(path)) return 0;
    Duration d = EngineSettings.positiveOrOff(root, path);
    return d == null ? 0 : d.toNanos();
  }

  /**
   * Arms {@code st}'s deadline: {@code options}' own, or {@code defaultNanos} (0: none) when the options leave it to
   * the engine (null options do). Returns {@code st}.
   */
  static TransferStatus arm(TransferStatus st, TransferOptions options, long defaultNanos) {
    long nanos;
    if (options != null && options.overrideDefault()) {
      nanos = options.deadline() == null ? 0 : saturated(options.deadline());
    } else {
      nanos = defaultNanos;
    }
    if (nanos <= 0 || !(st instanceof TransferStatusImpl s) || !st.inProgress()) return st;
    s.deadlineTask(Timer.EXEC.schedule(() -> s.cancel(StatusCode.ERR_TIMEOUT, "transfer uid " + s.uid()
        + " did not finish within its deadline of " + describe(nanos) + "; cancelled (its late data or acknowledgement is dropped)"),
        nanos, TimeUnit.NANOSECONDS));
    return st;
  }

  private static long saturated(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  private static String describe(long nanos) {
    return nanos % 1_000_000 == 0 ? nanos / 1_000_000 + " ms" : String.format("%.3f ms", nanos / 1e6);
  }
}
