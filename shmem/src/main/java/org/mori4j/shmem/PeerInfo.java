package org.mori4j.shmem;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What one PE tells the others at init: who it is (rank, host, process), which GPU its heap is on (PCI
 * location, the same in every process whatever ordinal each gives the GPU) and how to reach the heap (size,
 * address in its own process, IPC handle).
 *
 * @param rank the PE
 * @param host identifies the machine: PEs with equal hosts can map each other's memory
 * @param pid the PE's process: PEs of one process use each other's addresses directly (CUDA cannot open an
 *     IPC handle in the process that exported it)
 * @param pciBusId the heap's GPU
 * @param device the heap's GPU ordinal in the PE's own process (for messages)
 * @param heapSize bytes of the heap
 * @param heapBase the heap's address in the PE's own process
 * @param heapHandle the heap's 64-byte IPC handle
 */
record PeerInfo(int rank, String host, long pid, String pciBusId, int device, long heapSize, long heapBase, byte[] heapHandle) {

  byte[] toBytes() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(rank);
      out.writeUTF(host);
      out.writeLong(pid);
      out.writeUTF(pciBusId);
      out.writeInt(device);
      out.writeLong(heapSize);
      out.writeLong(heapBase);
      out.writeInt(heapHandle.length);
      out.write(heapHandle);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /**
   * Sends {@code mine} to every PE of {@code bootstrap}'s group and returns every PE's record by rank; a record that
   * names another rank, or a heap size other than this PE's, fails the call (the heap must be the same everywhere).
   */
  static PeerInfo[] gather(Bootstrap bootstrap, PeerInfo mine) {
    byte[][] all = bootstrap.allGather(mine.toBytes(), false);
    PeerInfo[] peers = new PeerInfo[all.length];
    for (int p = 0; p < all.length; p++) {
      peers[p] = fromBytes(all[p], p);
      if (peers[p].rank() != p) throw new ShmemException("PE " + p + " says it is rank " + peers[p].rank());
      if (peers[p].heapSize() != mine.heapSize())
        throw new ShmemException("heap sizes differ: PE " + p + " has " + peers[p].heapSize() + " bytes, PE " + mine.rank() + " has " + mine.heapSize()
            + " (MORI_SHMEM_HEAP_SIZE must be the same on every PE)");
    }
    return peers;
  }

  static PeerInfo fromBytes(byte[] data, int from) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data))) {
      int rank = in.readInt();
      String host = in.readUTF();
      long pid = in.readLong();
      String pci = in.readUTF();
      int device = in.readInt();
      long heapSize = in.readLong();
      long heapBase = in.readLong();
      int n = in.readInt();
      if (n < 0 || n > 1024) throw new IOException("IPC handle of " + n + " bytes");
      byte[] handle = in.readNBytes(n);
      if (handle.length != n) throw new IOException("truncated");
      return new PeerInfo(rank, host, pid, pci, device, heapSize, heapBase, handle);
    } catch (IOException e) {
      throw new ShmemException("PE " + from + " sent an unreadable init record: " + e.getMessage(), e);
    }
  }

  /**
   * This machine's identity: the kernel's boot id where Linux has one (two containers on one host share it,
   * and can share GPU memory), else the host name.
   */
  static String localHost() {
    try {
      Path bootId = Path.of("/proc/sys/kernel/random/boot_id");
      if (Files.isReadable(bootId)) return "boot:" + Files.readString(bootId).trim();
    } catch (IOException ignored) {
      // fall back to the name
    }
    try {
      return "name:" + InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "name:unknown";
    }
  }
}
