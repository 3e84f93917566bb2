package org.mori4j.io.kv;

import java.io.NotSerializableException;
import java.nio.ByteBuffer;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;
import org.mori4j.io.internal.DescriptorCodec;
import org.mori4j.io.internal.ResolvingSerializer;

/**
 * Binary serializer of {@link KvProtocol}'s network messages, in the descriptors' length-checked format; a
 * malformed frame is refused whole. The manifest is the frame's format: the notices of a request carry the sending
 * migration's id since {@link KvCacheDesc} version 3, under new manifests ({@code KL2}, {@code KS2}, {@code KA2}); a
 * frame under the earlier ones comes from an older mori4j and is refused saying so (the descriptor's version already
 * keeps two such builds from pairing up; this names the cause should a frame get through anyway).
 */
public final class KvMessageSerializer extends ResolvingSerializer {
  private static final String LANDED = "KL2", SENT = "KS2", ABORTED = "KA2", DESCRIBE = "KD", DESCRIPTION = "Kd";
  /** The notices' manifests before migration ids. */
  private static final java.util.Set<String> WITHOUT_MIGRATION = java.util.Set.of("KL", "KS", "KA");

  public KvMessageSerializer(ExtendedActorSystem system) {
    super(system);
  }

  @Override
  public int identifier() {
    return 4243;
  }

  @Override
  public String manifest(Object o) {
    return switch (o) {
      case KvProtocol.LayersLanded l -> LANDED;
      case KvProtocol.LayersSent l -> SENT;
      case KvProtocol.RequestAborted a -> ABORTED;
      case KvProtocol.Describe d -> DESCRIBE;
      case KvProtocol.Description d -> DESCRIPTION;
      default -> throw new IllegalArgumentException("cannot serialize " + o.getClass().getName());
    };
  }

  @Override
  public byte[] toBinary(Object o) {
    DescriptorCodec.Writer w = new DescriptorCodec.Writer();
    switch (o) {
      case KvProtocol.LayersLanded l ->
          w.string(l.cacheName()).string(l.requestId()).i64(l.migration()).i32(l.fromLayer()).i32(l.toLayer()).string(l.fromEngine());
      case KvProtocol.LayersSent l -> {
        w.string(l.cacheName()).string(l.requestId()).i64(l.migration()).i32(l.fromLayer()).i32(l.toLayer()).string(l.fromEngine()).i32(l.uids().length);
        for (long u : l.uids()) w.i64(u);
        // optional trailing flag and the sender's incarnation: frames without them read as no board
        if (l.board()) w.i8(1).i64(l.fromIncarnation());
      }
      case KvProtocol.RequestAborted a -> w.string(a.cacheName()).string(a.requestId()).i64(a.migration()).string(a.fromEngine()).string(a.reason());
      case KvProtocol.Describe d -> w.string(d.cacheName()).string(resolver().toSerializationFormat(d.replyTo()));
      case KvProtocol.Description d -> {
        w.string(d.cacheName()).i32(d.desc().length);
        for (byte b : d.desc()) w.i8(b);
      }
      default -> throw new IllegalArgumentException("cannot serialize " + o.getClass().getName());
    }
    return w.toBytes();
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    if (WITHOUT_MIGRATION.contains(manifest))
      throw new NotSerializableException("a '" + manifest + "' KV notice without a migration id comes from a mori4j older than this one (which reads '"
          + manifest + "2'): run the same mori4j build on both engines");
    try {
      if (bytes.length > DescriptorCodec.MAX_DESCRIPTOR_BYTES + 8192) throw new IllegalArgumentException("message too long");
      ByteBuffer in = ByteBuffer.wrap(bytes);
      Object out = switch (manifest) {
        case LANDED -> {
          String cache = DescriptorCodec.readString(in, "cacheName"), req = DescriptorCodec.readString(in, "requestId");
          long migration = migration(in);
          DescriptorCodec.need(in, 8, "layers");
          int from = in.getInt(), to = in.getInt();
          yield new KvProtocol.LayersLanded(cache, req, migration, from, to, DescriptorCodec.readString(in, "fromEngine"));
        }
        case SENT -> {
          String cache = DescriptorCodec.readString(in, "cacheName"), req = DescriptorCodec.readString(in, "requestId");
          long migration = migration(in);
          DescriptorCodec.need(in, 8, "layers");
          int from = in.getInt(), to = in.getInt();
          String engine = DescriptorCodec.readString(in, "fromEngine");
          DescriptorCodec.need(in, 4, "uid count");
          int n = in.getInt();
          if (n < 1 || n > in.remaining() / 8) throw new IllegalArgumentException("uid count " + n + " with " + in.remaining() + " bytes left");
          long[] uids = new long[n];
          for (int i = 0; i < n; i++) uids[i] = in.getLong();
          boolean board = false;
          long incarnation = 0;
          if (in.hasRemaining()) {
            int flag = in.get();
            if (flag != 1) throw new IllegalArgumentException("board flag " + flag);
            board = true;
            DescriptorCodec.need(in, 8, "sender incarnation");
            incarnation = in.getLong();
          }
          yield new KvProtocol.LayersSent(cache, req, migration, from, to, engine, uids, board, incarnation);
        }
        case ABORTED -> {
          String cache = DescriptorCodec.readString(in, "cacheName"), req = DescriptorCodec.readString(in, "requestId");
          long migration = migration(in);
          yield new KvProtocol.RequestAborted(cache, req, migration, DescriptorCodec.readString(in, "fromEngine"), DescriptorCodec.readString(in, "reason"));
        }
        case DESCRIBE -> {
          String cache = DescriptorCodec.readString(in, "cacheName");
          String path = DescriptorCodec.readString(in, "replyTo");
          if (!path.startsWith("pekko")) throw new IllegalArgumentException("not an actor address: " + path);
          ActorRef<KvProtocol.Description> ref = resolver().resolveActorRef(path);
          yield new KvProtocol.Describe(cache, ref);
        }
        case DESCRIPTION -> {
          String cache = DescriptorCodec.readString(in, "cacheName");
          DescriptorCodec.need(in, 4, "length");
          int n = in.getInt();
          if (n < 0 || n > DescriptorCodec.MAX_DESCRIPTOR_BYTES) throw new IllegalArgumentException("description of " + n + " bytes");
          DescriptorCodec.need(in, n, "desc");
          byte[] d = new byte[n];
          in.get(d);
          yield new KvProtocol.Description(cache, d);
        }
        default -> throw new NotSerializableException("unknown manifest '" + manifest + "'");
      };
      DescriptorCodec.expectEnd(in, manifest);
      return out;
    } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
      throw new NotSerializableException("malformed " + manifest + " message: " + e.getMessage());
    }
  }

  private static long migration(ByteBuffer in) {
    DescriptorCodec.need(in, 8, "migration id");
    long m = in.getLong();
    if (m == 0) throw new IllegalArgumentException("migration id 0");
    return m;
  }
}
