package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Builds FFM struct and union layouts the way a C compiler on LP64 Linux lays them out: each member at
 * the next multiple of its alignment, the whole padded to its largest alignment. The members are named
 * exactly as in the C header, so the ABI conformance tests can look every field up by its C name; no offset
 * is ever typed by hand, and {@link #offset} derives them from the layout. Anonymous C unions are named
 * {@code $anon...}; the tests look through them as C's {@code offsetof} does.
 */
public final class CLayout {
  /** C {@code size_t} on LP64. */
  public static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG;

  /**
   * glibc's {@code pthread_mutex_t}: 40 bytes on x86_64, 48 on aarch64. Only its size and alignment matter
   * (verbs structs embed one before fields we read); the probe checks the offsets after it.
   */
  public static final MemoryLayout PTHREAD_MUTEX =
      MemoryLayout.sequenceLayout(isAarch64() ? 6 : 5, ValueLayout.JAVA_LONG);

  /** glibc's {@code pthread_cond_t}: 48 bytes, 8-aligned, on both x86_64 and aarch64. */
  public static final MemoryLayout PTHREAD_COND = MemoryLayout.sequenceLayout(6, ValueLayout.JAVA_LONG);

  private CLayout() {}

  /** A C struct named {@code name}: members in order, padding inserted where the C compiler puts it. */
  public static StructLayout struct(String name, MemoryLayout... members) {
    List<MemoryLayout> laid = new ArrayList<>();
    long offset = 0;
    long maxAlign = 1;
    for (MemoryLayout m : members) {
      long align = m.byteAlignment();
      maxAlign = Math.max(maxAlign, align);
      long aligned = (offset + align - 1) / align * align;
      if (aligned > offset) laid.add(MemoryLayout.paddingLayout(aligned - offset));
      laid.add(m);
      offset = aligned + m.byteSize();
    }
    long size = (offset + maxAlign - 1) / maxAlign * maxAlign;
    if (size > offset) laid.add(MemoryLayout.paddingLayout(size - offset));
    return MemoryLayout.structLayout(laid.toArray(MemoryLayout[]::new)).withName(name);
  }

  /** A C union named {@code name}; FFM pads a union to its largest member already. */
  public static GroupLayout union(String name, MemoryLayout... members) {
    GroupLayout u = MemoryLayout.unionLayout(members);
    long align = u.byteAlignment();
    long size = (u.byteSize() + align - 1) / align * align;
    if (size > u.byteSize()) {
      MemoryLayout[] padded = new MemoryLayout[members.length + 1];
      System.arraycopy(members, 0, padded, 0, members.length);
      padded[members.length] = MemoryLayout.paddingLayout(size);
      u = MemoryLayout.unionLayout(padded);
    }
    return u.withName(name);
  }

  /** A fixed-size C array {@code type name[count]}. */
  public static MemoryLayout array(String name, long count, MemoryLayout element) {
    return MemoryLayout.sequenceLayout(count, element).withName(name);
  }

  /** The byte offset of a dotted field path ({@code "wr.rdma.rkey"}) in {@code layout}. */
  public static long offset(MemoryLayout layout, String dottedPath) {
    return layout.byteOffset(path(dottedPath));
  }

  /** The path elements of a dotted field path, one group element per name. */
  public static PathElement[] path(String dottedPath) {
    String[] names = dottedPath.split("\\.");
    PathElement[] path = new PathElement[names.length];
    for (int i = 0; i < names.length; i++) path[i] = PathElement.groupElement(names[i]);
    return path;
  }

  /** {@code int} members with these names, for {@link #struct}. */
  public static MemoryLayout[] ints(String... names) {
    return Arrays.stream(names).map(JAVA_INT::withName).toArray(MemoryLayout[]::new);
  }

  /** {@code uint16_t} members. */
  public static MemoryLayout[] shorts(String... names) {
    return Arrays.stream(names).map(JAVA_SHORT::withName).toArray(MemoryLayout[]::new);
  }

  /** {@code uint8_t} members. */
  public static MemoryLayout[] bytes(String... names) {
    return Arrays.stream(names).map(JAVA_BYTE::withName).toArray(MemoryLayout[]::new);
  }

  /** Pointer members. */
  public static MemoryLayout[] pointers(String... names) {
    return Arrays.stream(names).map(ADDRESS::withName).toArray(MemoryLayout[]::new);
  }

  /** Member runs joined in order, for structs that mix kinds. */
  public static MemoryLayout[] concat(MemoryLayout[]... parts) {
    return Arrays.stream(parts).flatMap(Arrays::stream).toArray(MemoryLayout[]::new);
  }

  private static boolean isAarch64() {
    String arch = System.getProperty("os.arch", "");
    return arch.equals("aarch64") || arch.equals("arm64");
  }
}
