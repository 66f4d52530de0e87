// A JVM monitor deadlock: thread "take-a-then-b" holds monitor A and asks
// for B, "take-b-then-a" holds B and asks for A (a latch makes sure each
// holds its first); both wait in ObjectMonitor::enter for ever while the
// JVM's housekeeping threads idle.  The truth: hang-blocked, the two
// named, not the crowd (issue 20).  Writes "ready" to the file named by
// its argument once both hold their first monitor.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

public class MonitorDeadlock {
    static final Object A = new Object(), B = new Object();
    static final CountDownLatch bothHold = new CountDownLatch(2);

    static Thread taker(String name, Object first, Object second) {
        return new Thread(() -> {
            synchronized (first) {
                bothHold.countDown();
                try {
                    bothHold.await();
                } catch (InterruptedException e) {
                    return;
                }
                synchronized (second) {
                    System.out.println("never");
                }
            }
        }, name);
    }

    public static void main(String[] args) throws Exception {
        Thread ab = taker("take-a-then-b", A, B), ba = taker("take-b-then-a", B, A);
        ab.start();
        ba.start();
        bothHold.await();
        Thread.sleep(200);
        Files.writeString(Path.of(args[0]), "ready\n");
        ab.join();
        ba.join();
    }
}
