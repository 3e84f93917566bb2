package org.mori4j.io.kv;

import com.typesafe.config.Config;
import java.time.Duration;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.StatusCode;
import org.mori4j.io.internal.SettingReads;
import org.mori4j.io.internal.SettingReads.Section;

/**
 * The {@code mori4j.kv} section, read from the engine's configuration only: {@code reference.conf} holds every
 * default, so there is no second copy of them here to drift. A value out of range, or of the wrong type or format,
 * is refused with {@code ERR_INVALID_ARGS} naming the key, its environment variable and the value (the message form of
 * {@link SettingReads}), when a cache is created (migration settings) or its KV endpoint starts (the landing board).
 *
 * @param tcpBatchParts    requests each TCP batch is cut into ({@code tcp-batch-parts}; 0 there resolves to
 *                         {@code mori4j.tcp.connections-per-peer})
 * @param tcpMinPart       smallest part a batch is cut into ({@code tcp-min-part})
 * @param firstChunkLayers layers in a migration's first batch call ({@code first-chunk-layers}; 0: one call)
 * @param planPoolBytes    bytes of plan arrays a cache keeps ({@code plan-pool-bytes}; 0: none)
 */
record KvSettings(int tcpBatchParts, long tcpMinPart, int firstChunkLayers, long planPoolBytes) {
  /** The migration settings of {@code c} (a full engine configuration). */
  static KvSettings of(Config c) {
    try {
      Section kv = SettingReads.section(c, "mori4j.kv");
      int parts = kv.getInt("tcp-batch-parts");
      if (parts < 0 || parts > 64) throw kv.refused("tcp-batch-parts", "must be in 0..64 (0: one per TCP connection)");
      if (parts == 0) parts = SettingReads.section(c, "mori4j.tcp").getInt("connections-per-peer");
      long minPart = kv.getBytes("tcp-min-part");
      if (minPart < 1) throw kv.refused("tcp-min-part", "must be at least 1 byte");
      int first = kv.getInt("first-chunk-layers");
      if (first < 0) throw kv.refused("first-chunk-layers", "must be at least 0 (0: one call for all layers)");
      long pool = kv.getBytes("plan-pool-bytes");
      if (pool < 0) throw kv.refused("plan-pool-bytes", "must be at least 0 (0: no pool)");
      return new KvSettings(parts, minPart, first, pool);
    } catch (SettingReads.Refused e) {
      throw invalid(e);
    }
  }

  /** {@code mori4j.kv.landing-board} of {@code c} (a full engine configuration). */
  static KvBoards.Settings board(Config c) {
    try {
      Section b = SettingReads.section(c, "mori4j.kv.landing-board");
      boolean on = b.getBoolean("enabled");
      int entries = b.getInt("entries");
      if (entries < KvLandingBoard.MIN_ENTRIES || entries > KvLandingBoard.MAX_ENTRIES || Integer.bitCount(entries) != 1)
        throw b.refused("entries", "must be a power of two in " + KvLandingBoard.MIN_ENTRIES + ".." + KvLandingBoard.MAX_ENTRIES);
      Duration spin = b.getDuration("spin");
      if (spin.isNegative()) throw b.refused("spin", "must be at least 0");
      Duration park = b.positiveDuration("park");
      return new KvBoards.Settings(on, entries, spin, park, b.getString("dir"));
    } catch (SettingReads.Refused e) {
      throw invalid(e);
    }
  }

  /** The KV layer's control calls answer with {@link IoEngineException}s; the refusal stays the cause. */
  private static IoEngineException invalid(SettingReads.Refused e) {
    return new IoEngineException(StatusCode.ERR_INVALID_ARGS, e.getMessage(), e);
  }
}
