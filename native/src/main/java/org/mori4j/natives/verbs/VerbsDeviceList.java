package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.mori4j.natives.NativeException;

/**
 * The array {@code ibv_get_device_list} returns, owned until {@link #close()} frees it with
 * {@code ibv_free_device_list}. Devices are opened from it by index; a context opened here stays valid after
 * the list is freed (libibverbs reference-counts the device). A kernel without RDMA support makes
 * libibverbs fail the listing with {@code ENOSYS}; that is an empty list here, with the reason kept.
 */
public final class VerbsDeviceList extends NativeResource {
  private final int count;
  private final String emptyReason;

  private VerbsDeviceList(MemorySegment list, int count, String emptyReason) {
    super("ibv device list", list, list.byteSize());
    this.count = count;
    this.emptyReason = emptyReason;
  }

  /** Lists the devices libibverbs sees; a {@code NativeException} for failures other than no kernel support. */
  public static VerbsDeviceList open() {
    int[] count = new int[1];
    try {
      MemorySegment list = IbVerbs.getDeviceList(count);
      return new VerbsDeviceList(list, count[0], count[0] == 0 ? "libibverbs lists none" : "");
    } catch (NativeException e) {
      if (e.code() != Errno.ENOSYS) throw e;
      return new VerbsDeviceList(MemorySegment.NULL, 0, "the kernel has no RDMA support (" + e.getMessage() + ")");
    }
  }

  /** Why the list is empty ({@code ""} when it is not). */
  public String emptyReason() {
    return emptyReason;
  }

  public int size() {
    return count;
  }

  /** The kernel names ({@code mlx5_0}, {@code rxe0}, ...), in list order. */
  public List<String> names() {
    List<String> names = new ArrayList<>(count);
    for (int i = 0; i < count; i++) names.add(IbVerbs.getDeviceName(device(i)));
    return names;
  }

  /** The {@code struct ibv_device *} at {@code index}. */
  public MemorySegment device(int index) {
    if (index < 0 || index >= count) {
      throw new IndexOutOfBoundsException("device " + index + " of " + count);
    }
    return handle().getAtIndex(ADDRESS, index);
  }

  /** {@code ibv_open_device} on the device at {@code index}. */
  public VerbsContext openContext(int index) {
    MemorySegment dev = device(index);
    return VerbsContext.own(IbVerbs.openDevice(dev), IbVerbs.getDeviceName(dev));
  }

  @Override
  protected void release(MemorySegment handle) {
    if (handle.address() != 0) IbVerbs.freeDeviceList(handle);
  }
}
