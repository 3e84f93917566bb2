package org.mori4j.shmem;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.gpuinit.EndpointHandle;
import org.mori4j.io.gpuinit.RdmaEndpoint;
import org.mori4j.io.gpuinit.RdmaMemoryRegion;

/**
 * What one PE tells the others when {@link RemotePeers} opens: its engine, its heap's region, and for every PE the
 * handles of the endpoints it created for that PE (empty rows for PEs it has no endpoints to), or why it failed.
 * Decoding bounds every length (fields, rows, endpoints per PE), so a damaged record fails with the reason.
 */
record RemotePeerRecord(String problem, EngineDesc engine, RdmaMemoryRegion heap, EndpointHandle[][] handles) {
  static RemotePeerRecord of(EngineDesc engine, RdmaMemoryRegion heap, RdmaEndpoint[][] eps) {
    EndpointHandle[][] h = new EndpointHandle[eps.length][];
    for (int p = 0; p < eps.length; p++) {
      h[p] = new EndpointHandle[eps[p] == null ? 0 : eps[p].length];
      for (int q = 0; q < h[p].length; q++) h[p][q] = eps[p][q].handle();
    }
    return new RemotePeerRecord(null, engine, heap, h);
  }

  byte[] toBytes() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      writeBlob(out, engine.toBytes());
      writeBlob(out, heap.toBytes());
      out.writeInt(handles.length);
      for (EndpointHandle[] row : handles) {
        out.writeInt(row.length);
        for (EndpointHandle h : row) writeBlob(out, h.toBytes());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  /** A problem (or null) followed by the record's bytes (empty for a PE without endpoints). */
  static byte[] withProblem(String problem, byte[] record) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeBoolean(problem != null);
      if (problem != null) out.writeUTF(problem.length() > 8000 ? problem.substring(0, 8000) : problem);
      out.write(record);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  static String problemOf(byte[] data) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data))) {
      return in.readBoolean() ? in.readUTF() : null;
    } catch (IOException e) {
      return "an unreadable record: " + e.getMessage();
    }
  }

  static RemotePeerRecord fromBytes(byte[] data, int n) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data))) {
      if (in.readBoolean()) return new RemotePeerRecord(in.readUTF(), null, null, null);
      if (in.available() == 0) return new RemotePeerRecord(null, null, null, new EndpointHandle[n][0]);
      EngineDesc engine = EngineDesc.fromBytes(readBlob(in));
      RdmaMemoryRegion heap = RdmaMemoryRegion.fromBytes(readBlob(in));
      int rows = in.readInt();
      if (rows != n) throw new IOException(rows + " endpoint rows for " + n + " PEs");
      EndpointHandle[][] h = new EndpointHandle[n][];
      for (int p = 0; p < n; p++) {
        int k = in.readInt();
        if (k < 0 || k > GpuStates.MAX_QP_PER_PE) throw new IOException(k + " endpoints for PE " + p);
        h[p] = new EndpointHandle[k];
        for (int q = 0; q < k; q++) h[p][q] = EndpointHandle.fromBytes(readBlob(in));
      }
      return new RemotePeerRecord(null, engine, heap, h);
    } catch (IOException e) {
      throw new ShmemException("unreadable endpoint record: " + e.getMessage(), e);
    }
  }

  private static void writeBlob(DataOutputStream out, byte[] b) throws IOException {
    out.writeInt(b.length);
    out.write(b);
  }

  private static byte[] readBlob(DataInputStream in) throws IOException {
    int len = in.readInt();
    if (len < 0 || len > (1 << 20)) throw new IOException("a field of " + len + " bytes");
    byte[] b = in.readNBytes(len);
    if (b.length != len) throw new IOException("truncated");
    return b;
  }
}
