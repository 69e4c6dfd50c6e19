package dev.redlock.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.RedisFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.tomcat.autoconfigure.servlet.TomcatServletWebServerAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * A {@link Locked} web method whose lock is not acquired, in a whole web application (embedded
 * Tomcat, a real HTTP request) on three real nodes: 409 when another client holds the lock, 503
 * when a majority of nodes is frozen, the body naming neither the resource nor the nodes; a lock
 * the method fails to take inside stays a 500, and an application's own handler wins.
 */
class WebStatusIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  /** A controller whose methods take the lock "ledger" for each request. */
  @RestController
  public static class Ledger {
    private final Redlock redlock;

    public Ledger(Redlock redlock) {
      this.redlock = redlock;
    }

    @Locked(resource = "ledger", ttl = "5s")
    @GetMapping("/settle")
    public String settle() {
      return "settled";
    }

    /** Takes a second lock itself, after it may have acted: its failure is no "did not run". */
    @Locked(resource = "ledger", ttl = "5s")
    @GetMapping("/transfer")
    public String transfer() throws InterruptedException {
      redlock.acquire("account:b", Duration.ofSeconds(5), Duration.ZERO).release();
      return "transferred";
    }
  }

  /** An application's own handler of the exception, in an advice of default order. */
  @RestControllerAdvice
  public static class OwnHandler {
    @ExceptionHandler(LockUnavailableException.class)
    public ResponseEntity<String> busy(LockUnavailableException e) {
      return ResponseEntity.status(418).body("the application's own");
    }
  }

  /** A web application: a servlet server, Spring MVC and JSON, the starter, the controller. */
  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration({
    TomcatServletWebServerAutoConfiguration.class,
    DispatcherServletAutoConfiguration.class,
    WebMvcAutoConfiguration.class,
    HttpMessageConvertersAutoConfiguration.class,
    JacksonAutoConfiguration.class,
    RedlockAutoConfiguration.class
  })
  @Import(Ledger.class)
  static class WebApp {}

  /** The same, with the application's own handler. */
  @Configuration(proxyBeanMethods = false)
  @Import({WebApp.class, OwnHandler.class})
  static class WebAppWithItsOwnHandler {}

  @Test
  void aLockNotAcquiredIsA409OrA503NotA500() throws Exception {
    try (ConfigurableApplicationContext app = start(WebApp.class);
        Redlock other = Redlock.create(RedlockConfig.builder().nodes(redis.uris()).build())) {
      String url = url(app, "/settle");
      assertEquals(200, get(url).statusCode(), "free: the method runs");

      Lease held = other.tryAcquire("ledger", Duration.ofSeconds(10)).orElseThrow();
      HttpResponse<String> busy;
      try {
        busy = get(url);
      } finally {
        held.release();
      }
      assertEquals(409, busy.statusCode(), busy.body());
      assertTrue(busy.body().contains("\"title\":\"Locked elsewhere\""), busy.body());
      assertFalse(busy.body().contains("ledger"), "the resource is not shown: " + busy.body());

      Lease account = other.tryAcquire("account:b", Duration.ofSeconds(10)).orElseThrow();
      HttpResponse<String> inside;
      try {
        inside = get(url.replace("/settle", "/transfer"));
      } finally {
        account.release();
      }
      assertEquals(500, inside.statusCode(), "the method ran and failed: " + inside.body());

      redis.nodes().node(1).pause(); // the fixture resumes them before the next test
      redis.nodes().node(2).pause();
      HttpResponse<String> broken = get(url);
      assertEquals(503, broken.statusCode(), broken.body());
      assertFalse(broken.body().contains("127.0.0.1"), "no node is shown: " + broken.body());
    }
  }

  @Test
  void anApplicationsOwnHandlerWins() throws Exception {
    try (ConfigurableApplicationContext app = start(WebAppWithItsOwnHandler.class);
        Redlock other = Redlock.create(RedlockConfig.builder().nodes(redis.uris()).build())) {
      Lease held = other.tryAcquire("ledger", Duration.ofSeconds(10)).orElseThrow();
      try {
        HttpResponse<String> busy = get(url(app, "/settle"));
        assertEquals(418, busy.statusCode(), busy.body());
      } finally {
        held.release();
      }
    }
  }

  private static ConfigurableApplicationContext start(Class<?> app) {
    return new SpringApplicationBuilder(app)
        .properties("server.port=0", "redlock.nodes=" + String.join(",", redis.uris()))
        .run();
  }

  private static String url(ConfigurableApplicationContext app, String path) {
    return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + path;
  }

  private static HttpResponse<String> get(String url) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    return client.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
