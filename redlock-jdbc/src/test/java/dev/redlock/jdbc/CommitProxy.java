package dev.redlock.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A TCP proxy in front of the database that loses the answer to a commit: once {@link #arm armed},
 * it forwards the next {@code COMMIT} a client sends and withholds everything the server sends back
 * on that link, until the test {@link Link#cut cuts} it. The server commits; the client never hears
 * that it did. (NetCrusher, behind {@link Database#cut}, cannot hold back one direction of one link
 * from a given message on.) PostgreSQL's and MariaDB's drivers both send the word as text, in one
 * packet.
 */
final class CommitProxy implements AutoCloseable {
  private static final byte[] COMMIT = "COMMIT".getBytes(StandardCharsets.US_ASCII);

  private final ServerSocket listener;
  private final String host;
  private final int port;
  private final ExecutorService threads =
      Executors.newCachedThreadPool(
          task -> {
            Thread t = new Thread(task, "commit-proxy");
            t.setDaemon(true);
            return t;
          });
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean armed = new AtomicBoolean();
  private volatile boolean gone; // cutAll began: nothing is forwarded either way
  private final CompletableFuture<Link> withheld = new CompletableFuture<>();

  /** A proxy on a free loopback port to {@code host:port}. */
  CommitProxy(String host, int port) throws IOException {
    this.host = host;
    this.port = port;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    threads.execute(this::accept);
  }

  int port() {
    return listener.getLocalPort();
  }

  /** The next commit any client sends through this proxy goes unanswered. */
  void arm() {
    armed.set(true);
  }

  /** The link whose commit went unanswered, once a client has sent it. */
  Link withheld(Duration max) throws Exception {
    return withheld.get(max.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Cuts every link and refuses new ones: the database is gone for good. No link forwards a byte
   * once this began: the first link cut wakes the client, which may use another pooled link before
   * that one is cut too.
   */
  void cutAll() throws IOException {
    gone = true;
    listener.close();
    links.forEach(Link::cut);
  }

  @Override
  public void close() throws IOException {
    cutAll();
    threads.shutdownNow();
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        Link link = new Link(client, new Socket(host, port));
        links.add(link);
        threads.execute(link::up);
        threads.execute(link::down);
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private static boolean contains(byte[] bytes, int length, byte[] word) {
    for (int i = 0; i + word.length <= length; i++) {
      int j = 0;
      while (j < word.length && bytes[i + j] == word[j]) {
        j++;
      }
      if (j == word.length) {
        return true;
      }
    }
    return false;
  }

  /** One client's connection to the server, through the proxy. */
  final class Link {
    private final Socket client;
    private final Socket server;
    private volatile boolean withholding;

    Link(Socket client, Socket server) {
      this.client = client;
      this.server = server;
    }

    /** Client to server; the armed commit is marked withheld before it is forwarded. */
    private void up() {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = client.getInputStream();
          OutputStream out = server.getOutputStream()) {
        for (int n = in.read(buffer); n >= 0 && !gone; n = in.read(buffer)) {
          boolean commit = contains(buffer, n, COMMIT) && armed.compareAndSet(true, false);
          if (commit) {
            withholding = true; // before the server can answer
          }
          out.write(buffer, 0, n);
          out.flush();
          if (commit) {
            withheld.complete(this);
          }
        }
      } catch (IOException e) {
        // cut
      } finally {
        cut();
      }
    }

    /** Server to client, except once the commit was sent. */
    private void down() {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = server.getInputStream();
          OutputStream out = client.getOutputStream()) {
        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
          if (gone) {
            break;
          }
          if (!withholding) {
            out.write(buffer, 0, n);
            out.flush();
          }
        }
      } catch (IOException e) {
        // cut
      } finally {
        cut();
      }
    }

    /** Closes both sides: the client sees its connection end, without the answer. */
    void cut() {
      links.remove(this);
      try {
        client.close();
      } catch (IOException ignored) {
        // closing
      }
      try {
        server.close();
      } catch (IOException ignored) {
        // closing
      }
    }
  }
}
