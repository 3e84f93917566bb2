package org.mori4j.io.internal.metrics;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A JDK Flight Recorder event per memory registration with one backend, timed by JFR itself (begin and commit
 * on the backend actor's thread, around the backend's registration: pinning, memory regions, IPC handles).
 */
@Name("org.mori4j.Registration")
@Label("mori4j Registration")
@Category({"mori4j", "Registrations"})
@Description("A memory region was registered with (or refused by) one backend of a mori4j engine")
@StackTrace(false)
final class RegistrationEvent extends jdk.jfr.Event {
  @Label("Engine")
  String engine;
  @Label("Backend")
  String backend;
  @Label("Memory ID")
  long memoryId;
  @Label("Location")
  @Description("CPU or GPU")
  String location;
  @Label("Bytes")
  @DataAmount
  long bytes;
  @Label("Succeeded")
  boolean succeeded;
  @Label("Failure")
  String failure;
}
