package dev.redlock.node;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ScriptTest {
  @Test
  void scriptsLoadFromResourcesWithTheirSha1() {
    assertTrue(Script.RELEASE.source().contains("redis.call('DEL'"));
    assertTrue(Script.EXTEND.source().contains("redis.call('PEXPIRE'"));
    assertTrue(Script.RELEASE.sha1().matches("[0-9a-f]{40}"));
  }
}
