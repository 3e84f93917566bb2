package org.mori4j.transport.rdma.verbs;

import java.util.List;

/**
 * A source of RDMA devices with verbs semantics: {@code ibverbs} (libibverbs through FFM, for real NICs) or
 * {@code software} (a user-space device in Java, the analogue of the kernel's rxe, for tests and machines
 * without a NIC; always labelled emulation). The RDMA backend, its queue-pair bring-up, posting and polling
 * are written once against this interface and the handles it returns ({@link VerbsDevice},
 * {@link ProtectionDomain}, {@link MemoryRegion}, {@link CompletionQueue}, {@link CompletionChannel},
 * {@link QueuePair}), so every line above the provider runs on CI through the software provider. Failures of
 * a verb are {@link org.mori4j.natives.NativeException}s carrying the errno a NIC's library would return.
 */
public interface VerbsProvider {
  /** {@code "ibverbs"} or {@code "software"}. */
  String name();

  /** True for the software provider: its figures are emulation, never NIC performance. */
  boolean emulated();

  /** Names of the devices this provider can open (e.g. {@code mlx5_0}); empty when there is none. */
  List<String> deviceNames();

  /** Why {@link #deviceNames()} is empty, in the provider's words (empty when devices exist). */
  String whyNoDevice();

  /** Opens a device by name; the caller owns and closes it. */
  VerbsDevice open(String deviceName);
}
