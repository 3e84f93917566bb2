package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.VerbsConstants.*;

import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.transport.rdma.verbs.PostException;

/**
 * How the software provider reports a failed verb: a {@link NativeException} (or {@link PostException}) with the
 * errno and the {@code ibv_*} function a NIC's library would have failed in, and a message that names the
 * argument, its value and that this is the emulation. Also the names of queue-pair states for those messages.
 */
final class SoftErrors {
  static final String LIBRARY = "software RDMA (emulation)";

  private SoftErrors() {}

  static NativeException error(String function, int errno, String message) {
    return new NativeException(LIBRARY, function, errno, Errno.name(errno), text(function, errno, message));
  }

  static PostException postError(String function, int errno, int posted, String message) {
    return new PostException(LIBRARY, function, errno, Errno.name(errno), posted, text(function, errno, message));
  }

  private static String text(String function, int errno, String message) {
    return function + " failed (" + Errno.name(errno) + "): " + message + " [software RDMA provider, emulation]";
  }

  static String stateName(int state) {
    return switch (state) {
      case IBV_QPS_RESET -> "RESET";
      case IBV_QPS_INIT -> "INIT";
      case IBV_QPS_RTR -> "RTR";
      case IBV_QPS_RTS -> "RTS";
      case IBV_QPS_SQD -> "SQD";
      case IBV_QPS_SQE -> "SQE";
      case IBV_QPS_ERR -> "ERR";
      default -> "state " + state;
    };
  }

  static String hex(long v) {
    return "0x" + Long.toHexString(v);
  }
}
