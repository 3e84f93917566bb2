package org.mori4j.io;

/** Where registered memory lives: host memory ({@code CPU}) or device memory ({@code GPU}). */
public enum MemoryLocationType { CPU, GPU }
