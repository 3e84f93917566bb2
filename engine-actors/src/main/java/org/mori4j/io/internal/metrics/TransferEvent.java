package org.mori4j.io.internal.metrics;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * A JDK Flight Recorder event per finished transfer, committed on the thread that completed it (a backend's I/O
 * thread, or the caller's for a transfer refused at once). It is an instant event carrying its own
 * {@code latency} (submit to completion): a transfer starts on the caller's thread and ends on another, and
 * JFR's own duration can only be measured on one thread. No stack trace: the completing thread's stack says
 * nothing about the caller, and taking it would cost more than the transfer.
 */
@Name("org.mori4j.Transfer")
@Label("mori4j Transfer")
@Category({"mori4j", "Transfers"})
@Description("A transfer of a mori4j engine finished (succeeded or failed)")
@StackTrace(false)
final class TransferEvent extends jdk.jfr.Event {
  @Label("Engine")
  String engine;
  @Label("Peer")
  @Description("The remote engine's key ('none' for a transfer refused before a route was chosen)")
  String peer;
  @Label("Backend")
  String backend;
  @Label("Operation")
  @Description("read or write")
  String op;
  @Label("Kind")
  @Description("single, batch or session")
  String kind;
  @Label("Bytes")
  @DataAmount
  long bytes;
  @Label("Blocks")
  int blocks;
  @Label("Transfer UID")
  long uid;
  @Label("Status")
  String status;
  @Label("Latency")
  @Description("From submission to completion; -1 when the transfer started before the recording")
  @Timespan(Timespan.NANOSECONDS)
  long latency;
}
