// A JVM server whose main thread joins the serving thread, which waits in
// accept() for a client that never comes: idle (issue 20).  The java
// launcher's own main thread sits in pthread_join on the Java main thread.
// Writes "ready" to the file named by its argument once it listens.
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;

public class JoinServer {
    public static void main(String[] args) throws Exception {
        ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
        Thread serving = new Thread(() -> {
            try {
                while (true) {
                    Socket c = server.accept();
                    c.close();
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "serving");
        serving.start();
        Files.writeString(Path.of(args[0]), "ready\n");
        serving.join();
    }
}
