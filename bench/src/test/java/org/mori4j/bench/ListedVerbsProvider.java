package org.mori4j.bench;

import java.util.List;
import org.mori4j.transport.rdma.verbs.VerbsDevice;
import org.mori4j.transport.rdma.verbs.VerbsProvider;

/**
 * A verbs provider that only lists devices, standing in for ibverbs on a machine with NICs where a test needs
 * the choice {@code auto} makes there; opening a device is not part of such a test and fails.
 */
record ListedVerbsProvider(String name, List<String> deviceNames) implements VerbsProvider {
  @Override
  public boolean emulated() {
    return false;
  }

  @Override
  public String whyNoDevice() {
    return deviceNames.isEmpty() ? "none listed" : "";
  }

  @Override
  public VerbsDevice open(String deviceName) {
    throw new UnsupportedOperationException("this test opens no device");
  }
}
