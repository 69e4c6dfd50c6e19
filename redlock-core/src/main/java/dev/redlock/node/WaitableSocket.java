package dev.redlock.node;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PushbackInputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketImpl;
import java.net.SocketTimeoutException;

/**
 * A connected socket that can wait, bounded, for data to arrive without taking it from the reader:
 * it reads one byte with a short timeout and pushes it back. A timed-out read leaves a socket
 * valid, so a thread waiting for a quorum can give a silent node a millisecond and turn to the
 * others, instead of blocking on it until the node timeout while their replies sit unread.
 *
 * <p>Jedis sees an ordinary socket: every method it uses is delegated.
 */
final class WaitableSocket extends Socket {
  private final Socket socket;
  private final PushbackInputStream in;

  WaitableSocket(Socket connected) throws IOException {
    super((SocketImpl) null);
    this.socket = connected;
    this.in = new PushbackInputStream(connected.getInputStream(), 1);
  }

  /**
   * Waits up to {@code millis} (at least 1) for a byte; true if one arrived or the stream ended or
   * failed (the reader will find out), false if the time passed. Only the reading thread may call
   * it.
   */
  boolean awaitReadable(int millis) {
    try {
      if (in.available() > 0) {
        return true;
      }
      int before = socket.getSoTimeout();
      socket.setSoTimeout(Math.max(1, millis));
      try {
        int b = in.read();
        if (b >= 0) {
          in.unread(b);
        }
        return true;
      } catch (SocketTimeoutException e) {
        return false;
      } finally {
        socket.setSoTimeout(before);
      }
    } catch (IOException e) {
      return true; // let the reader see the failure
    }
  }

  int available() {
    try {
      return in.available();
    } catch (IOException e) {
      return 1; // let the reader see the failure
    }
  }

  @Override
  public InputStream getInputStream() {
    return in;
  }

  @Override
  public OutputStream getOutputStream() throws IOException {
    return socket.getOutputStream();
  }

  @Override
  public void setSoTimeout(int timeout) throws SocketException {
    socket.setSoTimeout(timeout);
  }

  @Override
  public int getSoTimeout() throws SocketException {
    return socket.getSoTimeout();
  }

  @Override
  public void setTcpNoDelay(boolean on) throws SocketException {
    socket.setTcpNoDelay(on);
  }

  @Override
  public boolean getTcpNoDelay() throws SocketException {
    return socket.getTcpNoDelay();
  }

  @Override
  public void setKeepAlive(boolean on) throws SocketException {
    socket.setKeepAlive(on);
  }

  @Override
  public void setSoLinger(boolean on, int linger) throws SocketException {
    socket.setSoLinger(on, linger);
  }

  @Override
  public boolean isConnected() {
    return socket.isConnected();
  }

  @Override
  public boolean isBound() {
    return socket.isBound();
  }

  @Override
  public boolean isClosed() {
    return socket.isClosed();
  }

  @Override
  public boolean isInputShutdown() {
    return socket.isInputShutdown();
  }

  @Override
  public boolean isOutputShutdown() {
    return socket.isOutputShutdown();
  }

  @Override
  public void shutdownInput() throws IOException {
    socket.shutdownInput();
  }

  @Override
  public void shutdownOutput() throws IOException {
    socket.shutdownOutput();
  }

  @Override
  public InetAddress getInetAddress() {
    return socket.getInetAddress();
  }

  @Override
  public InetAddress getLocalAddress() {
    return socket.getLocalAddress();
  }

  @Override
  public int getPort() {
    return socket.getPort();
  }

  @Override
  public int getLocalPort() {
    return socket.getLocalPort();
  }

  @Override
  public SocketAddress getRemoteSocketAddress() {
    return socket.getRemoteSocketAddress();
  }

  @Override
  public SocketAddress getLocalSocketAddress() {
    return socket.getLocalSocketAddress();
  }

  @Override
  public synchronized void close() throws IOException {
    socket.close();
  }

  @Override
  public String toString() {
    return socket.toString();
  }
}
