package org.mori4j.transport;
/** TEMPORARY stage probe (not committed). */
public final class Probe { public static final long[] T = new long[16]; public static void t(int i) { T[i] = System.nanoTime(); } }
