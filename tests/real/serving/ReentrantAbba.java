// JVM lock-order deadlocks on java.util.concurrent locks (issue 32, row 10).
//
//   java ReentrantAbba.java abba READYFILE    "lock-a-then-b" holds ReentrantLock A
//       and waits for B; "lock-b-then-a" holds B and waits for A.
//   java ReentrantAbba.java cycle3 READYFILE  three threads, "cycle-1" .. "cycle-3",
//       each holds its own ReentrantLock and waits for the next one's.
//   java ReentrantAbba.java mixed READYFILE   "monitor-then-lk" holds a monitor
//       (synchronized) and waits for a ReentrantLock that "lock-then-monit" holds
//       while it waits to enter that monitor.
// A CyclicBarrier makes each deadlock certain; READYFILE is written once every
// member waits.  The main thread then joins the first member.
// Truth: hang-blocked, a deadlock naming its member threads (parked from user
// code in ReentrantLock.lock / blocked on the monitor), never the JVM's own
// idle threads (C2 CompilerThread, VM Thread, GC threads, Signal Dispatcher,
// Common-Cleaner, Finalizer, Reference Handler).  jstack reports it too.
import java.nio.file.*;
import java.util.concurrent.*;
import java.util.concurrent.locks.*;

public class ReentrantAbba {
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        Path ready = Path.of(args[1]);
        Thread[] ts;
        if (mode.equals("mixed")) {
            Object monitor = new Object();
            ReentrantLock lock = new ReentrantLock();
            CyclicBarrier both = new CyclicBarrier(2);
            ts = new Thread[] {
                new Thread(() -> {
                    synchronized (monitor) {
                        await(both);
                        lock.lock();
                    }
                }, "monitor-then-lk"),
                new Thread(() -> {
                    lock.lock();
                    await(both);
                    synchronized (monitor) {
                        lock.unlock();
                    }
                }, "lock-then-monit"),
            };
        } else {
            int n = mode.equals("cycle3") ? 3 : 2;
            ReentrantLock[] locks = new ReentrantLock[n];
            for (int i = 0; i < n; i++)
                locks[i] = new ReentrantLock();
            CyclicBarrier all = new CyclicBarrier(n);
            ts = new Thread[n];
            for (int i = 0; i < n; i++) {
                final int k = i;
                String name = n == 2 ? (k == 0 ? "lock-a-then-b" : "lock-b-then-a") : "cycle-" + (k + 1);
                ts[i] = new Thread(() -> {
                    locks[k].lock();
                    await(all);
                    locks[(k + 1) % n].lock();
                }, name);
            }
        }
        for (Thread t : ts)
            t.start();
        // every member waits: blocked on the monitor or parked on the lock
        for (Thread t : ts)
            while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.BLOCKED)
                Thread.sleep(10);
        Files.writeString(ready, "ready\n");
        ts[0].join();
    }

    static void await(CyclicBarrier b) {
        try {
            b.await();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}
