package org.mori4j.io.kv;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.function.Supplier;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.StatusCode;
import org.mori4j.io.internal.SettingReads;

/**
 * The {@code mori4j.kv} section, read from the engine's configuration only: {@code reference.conf} holds every
 * default, so there is no second copy of them here to drift. A value out of range, or of the wrong type or format,
 * is refused with {@code ERR_INVALID_ARGS} naming the key and the value, when a cache is created (migration
 * settings) or its KV endpoint starts (the landing board).
 *
 * @param tcpBatchParts    requests each TCP batch is cut into ({@code tcp-batch-parts}; 0 there resolves to
 *                         {@code mori4j.tcp.connections-per-peer})
 * @param tcpMinPart       smallest part a batch is cut into ({@code tcp-min-part})
 * @param firstChunkLayers layers in a migration's first batch call ({@code first-chunk-layers}; 0: one call)
 * @param planPoolBytes    bytes of plan arrays a cache keeps ({@code plan-pool-bytes}; 0: none)
 */
record KvSettings(int tcpBatchParts, long tcpMinPart, int firstChunkLayers, long planPoolBytes) {
  private static final String KV = "mori4j.kv.";

  /** The migration settings of {@code c} (a full engine configuration). */
  static KvSettings of(Config c) {
    int parts = read(c, KV + "tcp-batch-parts", () -> c.getInt(KV + "tcp-batch-parts"));
    if (parts < 0 || parts > 64) throw bad(c, KV + "tcp-batch-parts", "must be in 0..64 (0: one per TCP connection)");
    if (parts == 0) parts = read(c, "mori4j.tcp.connections-per-peer", () -> c.getInt("mori4j.tcp.connections-per-peer"));
    long minPart = read(c, KV + "tcp-min-part", () -> c.getBytes(KV + "tcp-min-part"));
    if (minPart < 1) throw bad(c, KV + "tcp-min-part", "must be at least 1 byte");
    int first = read(c, KV + "first-chunk-layers", () -> c.getInt(KV + "first-chunk-layers"));
    if (first < 0) throw bad(c, KV + "first-chunk-layers", "must be at least 0 (0: one call for all layers)");
    long pool = read(c, KV + "plan-pool-bytes", () -> c.getBytes(KV + "plan-pool-bytes"));
    if (pool < 0) throw bad(c, KV + "plan-pool-bytes", "must be at least 0 (0: no pool)");
    return new KvSettings(parts, minPart, first, pool);
  }

  /** {@code mori4j.kv.landing-board} of {@code c} (a full engine configuration). */
  static KvBoards.Settings board(Config c) {
    String p = KV + "landing-board.";
    boolean on = read(c, p + "enabled", () -> c.getBoolean(p + "enabled"));
    int entries = read(c, p + "entries", () -> c.getInt(p + "entries"));
    if (entries < KvLandingBoard.MIN_ENTRIES || entries > KvLandingBoard.MAX_ENTRIES || Integer.bitCount(entries) != 1)
      throw bad(c, p + "entries", "must be a power of two in " + KvLandingBoard.MIN_ENTRIES + ".." + KvLandingBoard.MAX_ENTRIES);
    Duration spin = read(c, p + "spin", () -> c.getDuration(p + "spin"));
    if (spin.isNegative()) throw bad(c, p + "spin", "must be at least 0");
    Duration park = read(c, p + "park", () -> c.getDuration(p + "park"));
    if (park.isNegative() || park.isZero()) throw bad(c, p + "park", "must be positive");
    String dir = read(c, p + "dir", () -> c.getString(p + "dir"));
    return new KvBoards.Settings(on, entries, spin, park, dir);
  }

  /** A typed read; a wrong type or format is refused like a wrong value. */
  private static <T> T read(Config c, String path, Supplier<T> get) {
    return SettingReads.read(c, path, path, get, (message, cause) -> new IoEngineException(StatusCode.ERR_INVALID_ARGS, message, cause));
  }

  private static IoEngineException bad(Config c, String path, String why) {
    return new IoEngineException(StatusCode.ERR_INVALID_ARGS, SettingReads.refusal(c, path, path, why));
  }
}
