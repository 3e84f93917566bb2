package org.mori4j.io.internal.metrics;

import jdk.jfr.FlightRecorder;
import jdk.jfr.FlightRecorderListener;
import jdk.jfr.Recording;
import jdk.jfr.RecordingState;

/**
 * Whether any JDK Flight Recorder recording runs in this JVM, kept by a recorder listener, so that the transfer path
 * reads one volatile boolean instead of taking two clock readings and building an event per transfer while nothing
 * records (measured by {@code MetricsHookBenchmark}: about 40 ns per transfer on a Xeon host). A recording that runs
 * decides with {@code shouldCommit()} whether it wants the event; a transfer that started before the recording did
 * reports latency -1.
 */
final class JfrState {
  static volatile boolean recording;

  static {
    try {
      FlightRecorder.addListener(new FlightRecorderListener() {
        @Override
        public void recorderInitialized(FlightRecorder recorder) {
          update();
        }

        @Override
        public void recordingStateChanged(Recording r) {
          update();
        }
      });
      if (FlightRecorder.isInitialized()) update();
    } catch (RuntimeException | Error e) {
      // no JFR in this runtime (jdk.jfr left out of a jlinked image): nothing will ever record
      recording = false;
    }
  }

  private JfrState() {}

  private static void update() {
    boolean any = false;
    for (Recording r : FlightRecorder.getFlightRecorder().getRecordings()) any |= r.getState() == RecordingState.RUNNING;
    recording = any;
  }
}
