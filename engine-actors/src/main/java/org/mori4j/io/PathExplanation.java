package org.mori4j.io;

import java.util.List;
import java.util.Objects;

/**
 * What a transfer between one local and one remote region would use, and why ({@link IoEngine#explain}):
 * the backend chosen (none when no backend can move the pair), whether the bytes move directly or through
 * host staging buffers, the connection or device, and every other backend with the reason it was not taken.
 * {@link #slower()} says whether the chosen path is slower than one the pair could have had, because a faster
 * backend failed for this pair (a failed connect, peer access refused, an IPC handle that did not open, a
 * backend whose creation failed) rather than not applying at all (host memory for XGMI, an engine on another
 * host, no RDMA device); the engine logs such a pair once at WARN when it first carries a transfer.
 * {@link #toString()} is written for a person.
 */
public record PathExplanation(String localEngine, String remoteEngine, MemoryLocationType localLocation, int localDevice,
                              MemoryLocationType remoteLocation, int remoteDevice, BackendType chosen, boolean staged,
                              String via, List<Refusal> refused) {
  /** Why a backend was not taken for the pair. */
  public enum Reason {
    /** A faster backend could move the pair, but ranks after the chosen one (shown for completeness). */
    LOWER_PREFERENCE,
    /** The backend does not move this kind of memory (XGMI and host memory). */
    MEMORY_KIND,
    /** This engine has no such backend: {@code createBackend} was not called, or failed for a reason the others do not name. */
    BACKEND_NOT_CREATED,
    /** The remote engine has no such backend. */
    NOT_ON_REMOTE,
    /** The backend needs a GPU runtime (CUDA or HIP) that this process could not open. */
    NO_GPU_RUNTIME,
    /** {@code createBackend(RDMA)} found no RDMA device (provider {@code auto} or {@code ibverbs}). */
    RDMA_ABSENT,
    /** The remote engine runs on another host (XGMI reaches engines of one host only). */
    OTHER_HOST,
    /** Connecting this backend to the remote engine failed; the message holds the cause. */
    CONNECT_FAILED,
    /** The backend is not connected to the remote engine (lost, or never tried). */
    NOT_CONNECTED,
    /** One of the two regions has no registration with the backend (it failed, or came before the backend). */
    NOT_REGISTERED,
    /** The two GPUs have no peer access to each other. */
    PEER_ACCESS_REFUSED,
    /** The remote GPU memory cannot be mapped here: its IPC handle is missing or did not open. */
    IPC_HANDLE_NOT_OPENED,
    /** The backend is closed or not started. */
    CLOSED,
    /** Anything else; the message says what. */
    OTHER;

    /**
     * Whether this reason means the backend could serve the pair on this setup and failed to (a degradation),
     * rather than not applying to it.
     */
    public boolean degradation() {
      return switch (this) {
        case CONNECT_FAILED, NOT_CONNECTED, NOT_REGISTERED, PEER_ACCESS_REFUSED, IPC_HANDLE_NOT_OPENED -> true;
        default -> false;
      };
    }
  }

  /**
   * One backend that was not taken: {@code reason} and a sentence; {@code degraded} when it failed on this setup
   * (see {@link Reason#degradation()}; a backend whose creation failed for a cause other than a missing GPU
   * runtime or RDMA device counts as degraded too).
   */
  public record Refusal(BackendType backend, Reason reason, String message, boolean degraded) {
    public Refusal {
      Objects.requireNonNull(backend, "backend");
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(message, "message");
    }

    @Override
    public String toString() {
      return backend + ": " + reason + (degraded ? " (degraded)" : "") + ": " + message;
    }
  }

  public PathExplanation {
    Objects.requireNonNull(localEngine, "localEngine");
    Objects.requireNonNull(remoteEngine, "remoteEngine");
    refused = List.copyOf(refused);
  }

  /** Whether a backend can move the pair at all. */
  public boolean transferable() {
    return chosen != null;
  }

  /** The refusal of {@code backend}, or null (the chosen one, or a backend not considered). */
  public Refusal refusal(BackendType backend) {
    for (Refusal r : refused) if (r.backend() == backend) return r;
    return null;
  }

  /**
   * Whether the pair takes a slower path than it could: a backend ranked before the chosen one was refused
   * because it failed ({@link Refusal#degraded()}), or nothing can move the pair because one failed.
   */
  public boolean slower() {
    for (Refusal r : refused) {
      if (chosen != null && r.backend().ordinal() >= chosen.ordinal()) continue;
      if (r.degraded()) return true;
    }
    return false;
  }

  /**
   * One line for tables and logs: the chosen backend, staged or direct, the connection or device, and when the
   * path is slower than the pair could have, which backend failed and why.
   */
  public String summary() {
    StringBuilder b = new StringBuilder();
    if (chosen == null) b.append("no backend can move this pair");
    else b.append(chosen).append(staged ? " through host staging" : " direct").append(" (").append(via).append(')');
    if (slower()) {
      b.append(" -- slower than this pair could have:");
      for (Refusal r : refused) {
        if (r.degraded() && (chosen == null || r.backend().ordinal() < chosen.ordinal()))
          b.append(' ').append(r.backend()).append(' ').append(r.reason()).append(" (").append(r.message()).append(')');
      }
    }
    return b.toString();
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    b.append(localLocation).append(localLocation == MemoryLocationType.GPU ? ":" + localDevice : "").append(" of engine '").append(localEngine)
        .append("' <-> ").append(remoteLocation).append(remoteLocation == MemoryLocationType.GPU ? ":" + remoteDevice : "")
        .append(" of engine '").append(remoteEngine).append("': ");
    if (chosen == null) b.append("NO BACKEND can move this pair");
    else b.append(chosen).append(staged ? " through host staging" : " direct").append(" (").append(via).append(')');
    if (slower()) b.append(" -- SLOWER than this pair could have");
    for (Refusal r : refused) b.append("\n  not ").append(r);
    return b.toString();
  }
}
