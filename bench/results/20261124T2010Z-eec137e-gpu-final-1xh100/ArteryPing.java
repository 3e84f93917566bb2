import org.apache.pekko.actor.*;
import com.typesafe.config.*;
import java.util.*;
import java.util.concurrent.*;

public class Ping { // saved as ArteryPing.java; run as: javac -cp "bench/target/lib/*" Ping.java && java -cp "bench/target/lib/*:." Ping [idle-cpu-level]
  static final CountDownLatch done = new CountDownLatch(1);
  static long[] rtt;
  public static class Echo extends AbstractActor {
    public Receive createReceive() { return receiveBuilder().match(Long.class, t -> getSender().tell(t, getSelf())).build(); }
  }
  public static class Pinger extends AbstractActor {
    final ActorSelection target; int i = 0; final int n;
    public Pinger(String path, int n) { target = getContext().actorSelection(path); this.n = n; rtt = new long[n]; }
    public void preStart() { target.tell(System.nanoTime(), getSelf()); }
    public Receive createReceive() { return receiveBuilder().match(Long.class, t -> {
      long now = System.nanoTime();
      if (i < n) rtt[i] = now - t;
      i++;
      if (i < n) { target.tell(System.nanoTime(), getSelf()); } else done.countDown();
    }).build(); }
  }
  public static void main(String[] a) throws Exception {
    String idle = a.length > 0 ? a[0] : "5";
    Config c = ConfigFactory.parseString("pekko.actor.provider=remote\npekko.remote.artery.canonical.hostname=127.0.0.1\npekko.remote.artery.canonical.port=0\npekko.loglevel=WARNING\npekko.remote.artery.advanced.idle-cpu-level=" + idle).withFallback(ConfigFactory.load());
    ActorSystem s1 = ActorSystem.create("a", c), s2 = ActorSystem.create("b", c);
    s2.actorOf(Props.create(Echo.class), "echo");
    var addr = ((ExtendedActorSystem) s2).provider().getDefaultAddress();
    int n = 3000;
    s1.actorOf(Props.create(Pinger.class, addr + "/user/echo", n));
    done.await(60, TimeUnit.SECONDS);
    long[] r = Arrays.copyOfRange(rtt, 500, n); Arrays.sort(r);
    System.out.printf("idle-cpu-level %s: artery round trip between two ActorSystems in one JVM, loopback: p50 %.1f us, p90 %.1f us, p99 %.1f us (%d after 500 warm-up)%n", idle, r[r.length/2]/1e3, r[r.length*9/10]/1e3, r[r.length*99/100]/1e3, r.length);
    s1.terminate(); s2.terminate();
  }
}
