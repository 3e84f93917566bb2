package org.mori4j.io.gpuinit;

import java.io.NotSerializableException;
import java.nio.ByteBuffer;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;
import org.mori4j.io.internal.DescriptorCodec;
import org.mori4j.io.internal.ResolvingSerializer;

/**
 * Binary serializer of {@link GpuInitProtocol}'s network messages (id 4244, bound in reference.conf), in the
 * descriptors' length-checked format: a malformed frame is refused whole.
 */
public final class GpuInitMessageSerializer extends ResolvingSerializer {
  private static final String LOOKUP = "GL", ANSWER = "Ga", PROBE = "GP", PROBED = "Gp", OP = "GO", RESULT = "Gr", CLOSING = "GC", PING = "GI", PONG = "Gi";

  public GpuInitMessageSerializer(ExtendedActorSystem system) {
    super(system);
  }

  @Override
  public int identifier() {
    return 4244;
  }

  @Override
  public String manifest(Object o) {
    return switch (o) {
      case GpuInitProtocol.LookupRkey m -> LOOKUP;
      case GpuInitProtocol.RkeyAnswer m -> ANSWER;
      case GpuInitProtocol.Probe m -> PROBE;
      case GpuInitProtocol.ProbeAnswer m -> PROBED;
      case GpuInitProtocol.PeerOp m -> OP;
      case GpuInitProtocol.PeerOpResult m -> RESULT;
      case GpuInitProtocol.Closing m -> CLOSING;
      case GpuInitProtocol.Ping m -> PING;
      case GpuInitProtocol.Pong m -> PONG;
      default -> throw new IllegalArgumentException("cannot serialize " + o.getClass().getName());
    };
  }

  @Override
  public byte[] toBinary(Object o) {
    DescriptorCodec.Writer w = new DescriptorCodec.Writer();
    switch (o) {
      case GpuInitProtocol.LookupRkey m -> w.i32(m.rkey()).i64(m.corr()).string(ref(m.replyTo()));
      case GpuInitProtocol.RkeyAnswer m -> w.i64(m.corr()).i32(m.rkey()).i8(m.found() ? 1 : 0).i64(m.address()).i64(m.size()).i32(m.access())
          .blob(m.desc());
      case GpuInitProtocol.Probe m -> w.i32(m.qpn()).string(ref(m.replyTo())).string(ref(m.from()));
      case GpuInitProtocol.ProbeAnswer m -> w.i32(m.qpn()).i8(m.found() ? 1 : 0).blob(m.desc()).string(m.message());
      case GpuInitProtocol.PeerOp m -> w.i32(m.op()).i32(m.srcQpn()).i32(m.dstQpn()).i64(m.wqeIndex()).i64(m.remoteAddr()).i32(m.rkey())
          .i64(m.compareAdd()).i64(m.swap()).i32(m.imm()).i32(m.length()).blob(m.payload()).string(ref(m.replyTo()));
      case GpuInitProtocol.PeerOpResult m -> w.i32(m.srcQpn()).i64(m.wqeIndex()).i32(m.status()).i64(m.value()).string(m.message());
      case GpuInitProtocol.Closing m -> w.string(ref(m.from()));
      case GpuInitProtocol.Ping m -> w.i64(m.corr()).string(ref(m.replyTo()));
      case GpuInitProtocol.Pong m -> w.i64(m.corr());
      default -> throw new IllegalArgumentException("cannot serialize " + o.getClass().getName());
    }
    return w.toBytes();
  }

  private String ref(ActorRef<?> r) {
    return resolver().toSerializationFormat(r);
  }

  private <T> ActorRef<T> resolve(ByteBuffer in, String what) {
    String path = DescriptorCodec.readString(in, what);
    if (!path.startsWith("pekko")) throw new IllegalArgumentException("not an actor address: " + path);
    return resolver().resolveActorRef(path);
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    try {
      if (bytes.length > DescriptorCodec.MAX_BLOB_BYTES + 8192) throw new IllegalArgumentException("message too long");
      ByteBuffer in = ByteBuffer.wrap(bytes);
      Object out = switch (manifest) {
        case LOOKUP -> {
          DescriptorCodec.need(in, 12, "lookup");
          int rkey = in.getInt();
          long corr = in.getLong();
          yield new GpuInitProtocol.LookupRkey(rkey, corr, resolve(in, "replyTo"));
        }
        case ANSWER -> {
          DescriptorCodec.need(in, 33, "answer");
          long corr = in.getLong();
          int rkey = in.getInt();
          boolean found = bool(in.get());
          long address = in.getLong(), size = in.getLong();
          int access = in.getInt();
          yield new GpuInitProtocol.RkeyAnswer(corr, rkey, found, address, size, access, DescriptorCodec.readBlob(in, "desc"));
        }
        case PROBE -> {
          DescriptorCodec.need(in, 4, "qpn");
          int qpn = in.getInt();
          ActorRef<GpuInitProtocol.ProbeAnswer> replyTo = resolve(in, "replyTo");
          yield new GpuInitProtocol.Probe(qpn, replyTo, resolve(in, "from"));
        }
        case PROBED -> {
          DescriptorCodec.need(in, 5, "probe answer");
          int qpn = in.getInt();
          boolean found = bool(in.get());
          byte[] desc = DescriptorCodec.readBlob(in, "desc");
          yield new GpuInitProtocol.ProbeAnswer(qpn, found, desc, DescriptorCodec.readString(in, "message"));
        }
        case OP -> {
          DescriptorCodec.need(in, 56, "op");
          int op = in.getInt(), src = in.getInt(), dst = in.getInt();
          long idx = in.getLong(), raddr = in.getLong();
          int rkey = in.getInt();
          long cmp = in.getLong(), swap = in.getLong();
          int imm = in.getInt(), len = in.getInt();
          byte[] payload = DescriptorCodec.readBlob(in, "payload");
          yield new GpuInitProtocol.PeerOp(op, src, dst, idx, raddr, rkey, cmp, swap, imm, len, payload, resolve(in, "replyTo"));
        }
        case RESULT -> {
          DescriptorCodec.need(in, 24, "result");
          int src = in.getInt();
          long idx = in.getLong();
          int status = in.getInt();
          long value = in.getLong();
          yield new GpuInitProtocol.PeerOpResult(src, idx, status, value, DescriptorCodec.readString(in, "message"));
        }
        case CLOSING -> new GpuInitProtocol.Closing(resolve(in, "from"));
        case PING -> {
          DescriptorCodec.need(in, 8, "corr");
          long corr = in.getLong();
          yield new GpuInitProtocol.Ping(corr, resolve(in, "replyTo"));
        }
        case PONG -> {
          DescriptorCodec.need(in, 8, "corr");
          yield new GpuInitProtocol.Pong(in.getLong());
        }
        default -> throw new NotSerializableException("unknown manifest '" + manifest + "'");
      };
      DescriptorCodec.expectEnd(in, manifest);
      return out;
    } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
      throw new NotSerializableException("malformed " + manifest + " message: " + e.getMessage());
    }
  }

  private static boolean bool(byte b) {
    if (b != 0 && b != 1) throw new IllegalArgumentException("flag byte " + b);
    return b == 1;
  }
}
