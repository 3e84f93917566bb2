package org.mori4j.transport;

/**
 * Why a backend cannot move bytes between one local region and one remote region it was asked about
 * ({@link TransferBackend#refusal}): a reason the engine can act on and report, and a sentence for a person.
 * Only the engine's path explanation builds these; the data path keeps asking {@code canServe}.
 */
public record ServeRefusal(Reason reason, String message) {
  /** The kinds of refusal a backend knows about. */
  public enum Reason {
    /** The backend does not move this kind of memory (XGMI and host memory). */
    MEMORY_KIND,
    /** There is no working data path to the peer (never connected, or lost). */
    NOT_CONNECTED,
    /** One of the regions has no registration with this backend (its registration failed or came before the backend). */
    NOT_REGISTERED,
    /** The two GPUs have no peer access to each other. */
    PEER_ACCESS_REFUSED,
    /** The remote GPU memory cannot be mapped here: no IPC handle exported, or opening it failed. */
    IPC_HANDLE_NOT_OPENED,
    /** GPU memory would need a GPU runtime (or staging) that this process does not have. */
    NO_GPU_RUNTIME,
    /** The backend is closed or not started. */
    CLOSED,
    /** A reason the backend does not classify; the message says it. */
    OTHER
  }

  public ServeRefusal {
    if (reason == null) throw new IllegalArgumentException("reason must not be null");
    if (message == null || message.isBlank()) throw new IllegalArgumentException("message must be given");
  }
}
