package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mori4j.transport.tcp.WireFormat.*;

import java.io.InputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.TransportError;

/**
 * A data connection that opens with a hello no handshake issued a token for is answered with the reason,
 * cut to the wire's limit for a message, and then closed; nothing else is read from it.
 */
class RefusedHelloTest {
  private TcpBackend backend;
  private Thread driver;
  private volatile boolean stop;

  @BeforeEach
  void start() {
    backend = new TcpBackend("target", new TcpSettings("127.0.0.1", 0, 1, 1, 4L << 20, 0, Duration.ofSeconds(10),
        Duration.ofSeconds(5), 1024, false, 64 * 1024));
    backend.start(BackendListener.NONE);
    CompletionSource s = backend.completionSources().getFirst();
    driver = new Thread(() -> {
      while (!stop && !s.isClosed()) if (s.doWork() == 0) s.awaitWork(1_000_000L);
    }, "driver");
    driver.setDaemon(true);
    driver.start();
  }

  @AfterEach
  void close() throws InterruptedException {
    backend.close();
    stop = true;
    driver.join(5000);
  }

  /** Sends a hello for {@code key} with a token nobody issued; returns the response status and message, after checking the close. */
  private String[] helloWithoutHandshake(String key) throws Exception {
    try (Socket socket = new Socket(backend.boundAddress().getAddress(), backend.boundAddress().getPort())) {
      socket.setSoTimeout(10_000);
      byte[] k = key.getBytes(StandardCharsets.UTF_8);
      ByteBuffer hello = ByteBuffer.allocate(REQ_HEADER + ENTRY + k.length);
      WireFormat.putRequest(hello, T_HELLO, 0, 1, 1, 0, 424242, 0, 0, 0, k.length);
      hello.putLong(0).putLong(k.length).put(k).flip();
      socket.getOutputStream().write(hello.array(), 0, hello.limit());
      InputStream in = socket.getInputStream();
      ByteBuffer r = ByteBuffer.wrap(in.readNBytes(RESP_HEADER));
      assertEquals(RESP_HEADER, r.limit(), "a response header");
      assertEquals(RESP_MAGIC, r.getInt(0));
      assertEquals(T_HELLO_OK, r.get(5), "a hello's answer");
      long len = r.getLong(16);
      String text = new String(in.readNBytes((int) len), StandardCharsets.UTF_8);
      assertEquals(-1, in.read(), "the target closes a refused connection");
      return new String[] {Integer.toString(r.get(6) & 0xff), Long.toString(len), text};
    }
  }

  @Test
  void aHelloWithoutAHandshakeIsRefusedWithTheReasonAndClosed() throws Exception {
    String[] r = helloWithoutHandshake("intruder");
    assertEquals(Integer.toString(TransportError.NOT_FOUND.wire()), r[0]);
    assertEquals("no handshake on record for engine 'intruder' with that token", r[2]);
    assertEquals(Integer.toString(r[2].length()), r[1]);
  }

  @Test
  void aReasonLongerThanTheWireAllowsIsCutToIt() throws Exception {
    String key = "k".repeat(MAX_SMALL_PAYLOAD - 10); // the reason quotes the key, so it runs past the limit
    String[] r = helloWithoutHandshake(key);
    assertEquals(Integer.toString(TransportError.NOT_FOUND.wire()), r[0]);
    assertEquals(Integer.toString(MAX_SMALL_PAYLOAD), r[1]);
    assertTrue(r[2].startsWith("no handshake on record for engine 'kkk"), r[2]);
  }
}
