package org.mori4j.bench.baseline;

import java.util.ArrayList;
import java.util.List;
import org.mori4j.bench.BaselineRow;
import org.mori4j.bench.HumanSize;
import org.mori4j.bench.ProgressBar;
import org.mori4j.bench.SweepPlan;

/**
 * Runs every baseline of a bench run in order, after mori4j's own rows so that they never compete for the
 * two cores: the plain-NIO stream for each point of the sweep, the NIO 4 KiB ping-pong, iperf3 and
 * ucx_perftest. A baseline that cannot run yields a row saying why instead of failing the run, because the
 * mori4j figures stay valid without it.
 */
public final class Baselines {
  public static final String NIO_STREAM = "nio-stream";
  public static final String NIO_PINGPONG = "nio-pingpong 4KiB";
  static final long PINGPONG_SIZE = 4096;

  /**
   * What the baselines need to know.
   *
   * @param nioHost       host of the NIO baseline server
   * @param nioPort       its port, or 0 when unknown (then the NIO rows say so)
   * @param capacity      bytes of the target buffer, so the NIO stream cycles over the same slots
   * @param iters         measured iterations per point (as for mori4j)
   * @param warmup        warm-up iterations per point
   * @param warmupNanos   least warm-up time per point
   * @param pingpongIters samples of the ping-pong
   * @param iperfSeconds  duration of the iperf3 test
   */
  public record Settings(String nioHost, int nioPort, long capacity, int iters, int warmup, long warmupNanos, int pingpongIters,
                         int iperfSeconds) {}

  private Baselines() {}

  /** The number of progress steps {@link #run} takes for {@code points}. */
  public static int steps(SweepPlan plan) {
    return plan.points().size() + 3;
  }

  public static List<BaselineRow> run(SweepPlan plan, Settings s, ProgressBar progress) {
    List<BaselineRow> rows = new ArrayList<>();
    NioBaselineClient nio = s.nioPort() > 0 ? new NioBaselineClient(s.nioHost(), s.nioPort()) : null;
    String noNio = "needs --peer-nio PORT (the nio= value of serve's READY line)";
    for (SweepPlan.Point p : plan.points()) {
      progress.show(NIO_STREAM + " " + HumanSize.format(p.msgSize()) + " x " + p.batchSize());
      if (nio == null) {
        rows.add(BaselineRow.missing(NIO_STREAM, noNio));
      } else {
        try {
          rows.add(new BaselineRow(NIO_STREAM, nio.measure(p.msgSize(), p.batchSize(), s.iters(), s.warmup(), s.warmupNanos(), s.capacity()),
              "1 blocking SocketChannel, 8-byte ack per message"));
        } catch (Exception e) {
          rows.add(BaselineRow.missing(NIO_STREAM, "failed: " + e));
        }
      }
      progress.step();
    }
    progress.show(NIO_PINGPONG);
    if (nio == null) {
      rows.add(BaselineRow.missing(NIO_PINGPONG, noNio));
    } else {
      try {
        int warm = Math.max(100, s.pingpongIters() / 10);
        rows.add(new BaselineRow(NIO_PINGPONG, nio.measure(PINGPONG_SIZE, 1, s.pingpongIters(), warm, s.warmupNanos(), s.capacity()),
            "4 KiB request, 8-byte ack, " + s.pingpongIters() + " round trips"));
      } catch (Exception e) {
        rows.add(BaselineRow.missing(NIO_PINGPONG, "failed: " + e));
      }
    }
    progress.step();
    progress.show(IperfBaseline.SERIES);
    rows.add(IperfBaseline.run(s.iperfSeconds()));
    progress.step();
    progress.show("ucx_perftest");
    rows.addAll(UcxPerftestBaseline.run());
    progress.step();
    return rows;
  }
}
