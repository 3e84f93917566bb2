package org.mori4j.io.kv;

import java.nio.file.Path;

/**
 * {@link KvLandingBoardTest}'s second JVM: maps the board of engine {@code args[1]}, incarnation {@code args[2]}, in
 * directory {@code args[0]} and posts {@code args[3]} "landed" entries of sender "tx-x" (uids 1000, 1001, ...).
 */
public final class KvLandingBoardPoster {
  public static void main(String[] args) {
    try (KvLandingBoard b = KvLandingBoard.open(Path.of(args[0]), args[1], Long.parseLong(args[2]))) {
      if (b == null) {
        System.out.println("no board");
        System.exit(2);
      }
      int n = Integer.parseInt(args[3]);
      for (int i = 0; i < n; i++) {
        if (!b.post(KvLandingBoard.KIND_LANDED, KvLandingBoard.hash64("tx-x"), 1, 1000 + i)) {
          System.out.println("post " + i + " refused");
          System.exit(3);
        }
      }
    }
  }
}
