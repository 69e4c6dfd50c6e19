package dev.redlock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.redlock.spi.LeaseRequest.Shape;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeaseRequestTest {
  @Test
  void itsTextNeverShowsTheOwnerToken() {
    LeaseRequest r = new LeaseRequest(Shape.WRITE, List.of("books"), "s3cret-token", 3000, 250);
    assertFalse(r.toString().contains("s3cret-token"), r.toString());
    assertEquals("LeaseRequest{WRITE books, ttl 3000 ms, intent 250 ms}", r.toString());
  }

  @Test
  void resourcesMustFitTheShape() {
    IllegalArgumentException one =
        assertThrows(
            IllegalArgumentException.class,
            () -> new LeaseRequest(Shape.ONE, List.of("a", "b"), "t", 1000, 0));
    assertEquals("resources of a ONE request must be 1, were 2", one.getMessage());
    IllegalArgumentException all =
        assertThrows(
            IllegalArgumentException.class,
            () -> new LeaseRequest(Shape.ALL, List.of("a"), "t", 1000, 0));
    assertEquals("resources of a ALL request must be 2 or more, were 1", all.getMessage());
  }

  @Test
  void onlyAWriterLeavesAnIntentMark() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new LeaseRequest(Shape.READ, List.of("a"), "t", 1000, 5));
    assertEquals(
        "intentMillis must be 0, or positive for a WRITE request; was 5 for READ", e.getMessage());
    assertEquals("[a, b]", new LeaseRequest(Shape.ALL, List.of("a", "b"), "t", 1000, 0).name());
  }
}
