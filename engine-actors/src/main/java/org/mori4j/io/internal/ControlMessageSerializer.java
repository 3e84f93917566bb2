package org.mori4j.io.internal;

import java.io.NotSerializableException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.MemoryDesc;

/**
 * Binary serializer for the messages engines exchange over Pekko remoting (discovery, lookups, backend
 * handshakes) and for the descriptors inside them. It reuses the descriptors' versioned, length-checked
 * format; anything malformed is rejected with an exception, so a bad frame is dropped, never half-read.
 */
public final class ControlMessageSerializer extends ResolvingSerializer {
  private static final String ENGINE_DESC = "E", MEMORY_DESC = "M", GET_DESC = "G", LOOKUP = "L", LOOKUP_REPLY = "R",
      HANDSHAKE = "H", HANDSHAKE_REPLY = "h", XGMI_CONFIRM = "XC", XGMI_CONFIRM_REPLY = "Xc", XGMI_REVOKE = "XR", XGMI_REVOKED = "Xr",
      XGMI_IMPORTER_CLOSED = "XI", PEER_CLOSING = "C";


  public ControlMessageSerializer(ExtendedActorSystem system) {
    super(system);
  }

  @Override
  public int identifier() {
    return 4242;
  }

  @Override
  public String manifest(Object o) {
    return switch (o) {
      case EngineDesc d -> ENGINE_DESC;
      case MemoryDesc d -> MEMORY_DESC;
      case IoEngineProtocol.GetEngineDesc g -> GET_DESC;
      case IoEngineProtocol.LookupMemory l -> LOOKUP;
      case IoEngineProtocol.MemoryLookup r -> LOOKUP_REPLY;
      case EngineMessages.BackendHandshake h -> HANDSHAKE;
      case EngineMessages.HandshakeReply h -> HANDSHAKE_REPLY;
      case XgmiMessages.Confirm c -> XGMI_CONFIRM;
      case XgmiMessages.ConfirmReply c -> XGMI_CONFIRM_REPLY;
      case XgmiMessages.Revoke r -> XGMI_REVOKE;
      case XgmiMessages.Revoked r -> XGMI_REVOKED;
      case XgmiMessages.ImporterClosed c -> XGMI_IMPORTER_CLOSED;
      case EngineMessages.PeerClosing c -> PEER_CLOSING;
      default -> throw new IllegalArgumentException("cannot serialize " + o.getClass().getName());
    };
  }

  @Override
  public byte[] toBinary(Object o) {
    DescriptorCodec.Writer w = new DescriptorCodec.Writer();
    switch (o) {
      case EngineDesc d -> { return d.toBytes(); }
      case MemoryDesc d -> { return d.toBytes(); }
      case IoEngineProtocol.GetEngineDesc g -> w.string(ref(g.replyTo()));
      case IoEngineProtocol.LookupMemory l -> w.string(l.name()).string(ref(l.replyTo()));
      case IoEngineProtocol.MemoryLookup r -> {
        w.string(r.name()).i32(r.found().size());
        for (MemoryDesc d : r.found()) w.blob(d.toBytes());
      }
      case EngineMessages.BackendHandshake h -> w.string(h.fromKey()).i8(h.type().ordinal()).blob(h.request()).string(ref(h.replyTo()))
          .i64(h.fromIncarnation()).i64(h.toIncarnation());
      case EngineMessages.HandshakeReply h -> w.blob(h.data()).i8(h.error() == null ? 0 : 1).string(h.error() == null ? "" : h.error());
      case XgmiMessages.Confirm c -> w.string(c.fromKey()).i64(c.regionId()).i64(c.accessKey()).i8(c.backend().ordinal()).string(ref(c.from()))
          .string(ref(c.replyTo())).i64(c.ownerIncarnation());
      case XgmiMessages.ConfirmReply c -> w.i64(c.address()).i64(c.size()).blob(c.data()).i8(c.error()).string(c.reason());
      case XgmiMessages.Revoke r -> w.string(r.ownerKey()).i64(r.regionId()).string(ref(r.replyTo()));
      case XgmiMessages.Revoked r -> w.string(r.importerKey()).i64(r.regionId());
      case XgmiMessages.ImporterClosed c -> w.string(c.importerKey());
      case EngineMessages.PeerClosing c -> w.string(c.engineKey()).i64(c.incarnation());
      default -> throw new IllegalArgumentException("cannot serialize " + o.getClass().getName());
    }
    return w.toBytes();
  }

  private String ref(ActorRef<?> r) {
    return resolver().toSerializationFormat(r);
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    try {
      return decode(bytes, manifest);
    } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
      throw new NotSerializableException("malformed " + manifest + " message: " + e.getMessage());
    }
  }

  private Object decode(byte[] bytes, String manifest) throws NotSerializableException {
    if (manifest.equals(ENGINE_DESC)) return EngineDesc.fromBytes(bytes);
    if (manifest.equals(MEMORY_DESC)) return MemoryDesc.fromBytes(bytes);
    if (bytes.length > DescriptorCodec.MAX_DESCRIPTOR_BYTES) throw new IllegalArgumentException("message too long");
    ByteBuffer in = ByteBuffer.wrap(bytes);
    Object out = switch (manifest) {
      case GET_DESC -> new IoEngineProtocol.GetEngineDesc(resolve(in));
      case LOOKUP -> new IoEngineProtocol.LookupMemory(DescriptorCodec.readString(in, "name"), resolve(in));
      case LOOKUP_REPLY -> {
        String name = DescriptorCodec.readString(in, "name");
        DescriptorCodec.need(in, 4, "count");
        int n = in.getInt();
        if (n < 0 || n > 16) throw new IllegalArgumentException("lookup reply with " + n + " descriptors");
        List<MemoryDesc> found = new ArrayList<>(n);
        for (int i = 0; i < n; i++) found.add(MemoryDesc.fromBytes(DescriptorCodec.readBlob(in, "desc")));
        yield new IoEngineProtocol.MemoryLookup(name, found);
      }
      case HANDSHAKE -> {
        String from = DescriptorCodec.readString(in, "fromKey");
        DescriptorCodec.need(in, 1, "type");
        int t = in.get() & 0xff;
        if (t >= BackendType.values().length) throw new IllegalArgumentException("unknown backend " + t);
        byte[] req = DescriptorCodec.readBlob(in, "request");
        ActorRef<EngineMessages.HandshakeReply> replyTo = resolve(in);
        DescriptorCodec.need(in, 16, "incarnations");
        long fromInc = in.getLong();
        long toInc = in.getLong();
        yield new EngineMessages.BackendHandshake(from, BackendType.values()[t], req, replyTo, fromInc, toInc);
      }
      case HANDSHAKE_REPLY -> {
        byte[] data = DescriptorCodec.readBlob(in, "data");
        DescriptorCodec.need(in, 1, "flag");
        boolean err = in.get() != 0;
        String text = DescriptorCodec.readString(in, "error");
        yield new EngineMessages.HandshakeReply(data, err ? text : null);
      }
      case XGMI_CONFIRM -> {
        String from = DescriptorCodec.readString(in, "fromKey");
        DescriptorCodec.need(in, 16, "region");
        long region = in.getLong();
        long key = in.getLong();
        DescriptorCodec.need(in, 1, "backend");
        int t = in.get() & 0xff;
        if (t >= BackendType.values().length) throw new IllegalArgumentException("unknown backend " + t);
        ActorRef<IoEngineProtocol.Command> asker = resolve(in);
        ActorRef<XgmiMessages.ConfirmReply> replyTo = resolve(in);
        DescriptorCodec.need(in, 8, "ownerIncarnation");
        long ownerInc = in.getLong();
        yield new XgmiMessages.Confirm(from, region, key, BackendType.values()[t], asker, replyTo, ownerInc);
      }
      case XGMI_CONFIRM_REPLY -> {
        DescriptorCodec.need(in, 16, "region");
        long address = in.getLong();
        long size = in.getLong();
        byte[] data = DescriptorCodec.readBlob(in, "data");
        DescriptorCodec.need(in, 1, "error");
        int error = in.get() & 0xff;
        yield new XgmiMessages.ConfirmReply(address, size, data, error, DescriptorCodec.readString(in, "reason"));
      }
      case XGMI_REVOKE -> {
        String owner = DescriptorCodec.readString(in, "ownerKey");
        DescriptorCodec.need(in, 8, "region");
        yield new XgmiMessages.Revoke(owner, in.getLong(), resolve(in));
      }
      case XGMI_REVOKED -> {
        String importer = DescriptorCodec.readString(in, "importerKey");
        DescriptorCodec.need(in, 8, "region");
        yield new XgmiMessages.Revoked(importer, in.getLong());
      }
      case XGMI_IMPORTER_CLOSED -> new XgmiMessages.ImporterClosed(DescriptorCodec.readString(in, "importerKey"));
      case PEER_CLOSING -> {
        String key = DescriptorCodec.readString(in, "engineKey");
        DescriptorCodec.need(in, 8, "incarnation");
        yield new EngineMessages.PeerClosing(key, in.getLong());
      }
      default -> throw new NotSerializableException("unknown manifest '" + manifest + "'");
    };
    DescriptorCodec.expectEnd(in, manifest);
    return out;
  }

  private <T> ActorRef<T> resolve(ByteBuffer in) {
    String path = DescriptorCodec.readString(in, "replyTo");
    if (!path.startsWith("pekko")) throw new IllegalArgumentException("not an actor address: " + path);
    return resolver().resolveActorRef(path);
  }
}
