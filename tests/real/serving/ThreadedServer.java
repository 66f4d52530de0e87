// A JVM thread-per-connection server with a batcher thread (issue 32, rows 4, 11).
//
// The main thread accepts; each connection gets a "handler-N" thread that
// reads the request, queues it with a CompletableFuture and waits in
// future.get(); one "batcher" thread takes the queue and completes them.
//
//   java ThreadedServer.java idle PORTFILE          no client.  Truth: idle (the
//       main thread in accept(), the batcher parked on its empty queue, the JVM's
//       own threads at rest).
//   java ThreadedServer.java answer PORTFILE        answers its load generator.
//       Truth: progress.
//   java ThreadedServer.java batcher-dies PORTFILE  after 4 answers the batcher
//       throws (an uncaught RuntimeException: the thread ends); every handler then
//       parks in future.get() for ever while clients keep coming.  Truth: a hang
//       (hang-blocked), the handlers parked from user code on futures that only
//       the dead batcher would complete.
//   java ThreadedServer.java client PORT            the load generator: a request
//       every 0.5 s, each on a new connection, each answer awaited.
// The server writes its port to PORTFILE once it listens.
import java.io.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.concurrent.*;

public class ThreadedServer {
    record Job(String request, CompletableFuture<String> answer) {}

    public static void main(String[] args) throws Exception {
        if (args[0].equals("client")) {
            client(Integer.parseInt(args[1]));
            return;
        }
        boolean dies = args[0].equals("batcher-dies");
        ServerSocket server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
        BlockingQueue<Job> jobs = new LinkedBlockingQueue<>();
        int[] answered = {0};
        Thread batcher = new Thread(() -> {
            try {
                while (true) {
                    Job j = jobs.take();
                    if (dies && answered[0]++ == 4)
                        throw new IllegalStateException("CUDA error: an illegal memory access was encountered");
                    j.answer().complete(new StringBuilder(j.request()).reverse().toString());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "batcher");
        batcher.start();
        Path tmp = Path.of(args[1] + ".tmp");
        Files.writeString(tmp, server.getLocalPort() + "\n");
        Files.move(tmp, Path.of(args[1]), StandardCopyOption.ATOMIC_MOVE);
        int n = 0;
        while (true) {
            Socket c = server.accept();
            new Thread(() -> handle(c, jobs), "handler-" + n++).start();
        }
    }

    static void handle(Socket c, BlockingQueue<Job> jobs) {
        try (c) {
            BufferedReader in = new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.US_ASCII));
            String line = in.readLine(), h;
            while ((h = in.readLine()) != null && !h.isEmpty()) {}
            CompletableFuture<String> f = new CompletableFuture<>();
            jobs.put(new Job(line, f));
            byte[] body = f.get().getBytes(StandardCharsets.US_ASCII);
            OutputStream out = c.getOutputStream();
            out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
        } catch (Exception e) {
            // a client gone: nothing to answer
        }
    }

    static void client(int port) throws Exception {
        for (int i = 0; ; i++) {
            final int k = i;
            Thread t = new Thread(() -> {
                try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                    s.getOutputStream().write(("GET /generate?i=" + k + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    s.getInputStream().readAllBytes();
                } catch (IOException e) {
                    // refused or reset: try the next one
                }
            }, "request-" + i);
            t.setDaemon(true);
            t.start();
            Thread.sleep(500);
        }
    }
}
