package org.mori4j.transport.rdma;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code MORI_RDMA_DEVICES} as MORI reads it: empty selects every device; {@code mlx5_0,mlx5_1} selects
 * those (in the order the provider lists them); {@code ^mlx5_2,mlx5_3} selects every device but those. A
 * name that matches no device is an error (a typo would otherwise silently run on fewer NICs).
 */
public final class DeviceSelection {
  private DeviceSelection() {}

  public static List<String> select(String spec, List<String> available) {
    String s = spec == null ? "" : spec.trim();
    if (s.isEmpty()) return List.copyOf(available);
    boolean exclude = s.startsWith("^");
    if (exclude) s = s.substring(1);
    Set<String> named = new LinkedHashSet<>();
    for (String n : s.split(",")) {
      String t = n.trim();
      if (t.isEmpty()) throw new IllegalArgumentException("MORI_RDMA_DEVICES '" + spec + "' has an empty device name");
      named.add(t);
    }
    for (String n : named) {
      if (!available.contains(n))
        throw new IllegalArgumentException("MORI_RDMA_DEVICES '" + spec + "' names device '" + n + "', which is not among " + available);
    }
    List<String> out = new ArrayList<>();
    for (String a : available) if (named.contains(a) != exclude) out.add(a);
    if (out.isEmpty()) throw new IllegalArgumentException("MORI_RDMA_DEVICES '" + spec + "' leaves no device of " + available);
    return out;
  }
}
