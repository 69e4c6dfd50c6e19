package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The public surface is the API package and the store SPI: internals stay out of reach of
 * module-path users.
 */
class ModuleDescriptorTest {
  @Test
  void exportsOnlyTheApiItsConfigurationAndTheStoreSpi() throws Exception {
    Path classes =
        Path.of(Redlock.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
      ModuleDescriptor descriptor = ModuleDescriptor.read(in);
      assertEquals("dev.redlock", descriptor.name());
      assertEquals(
          Set.of("dev.redlock", "dev.redlock.config", "dev.redlock.spi"),
          descriptor.exports().stream()
              .filter(e -> !e.isQualified())
              .map(ModuleDescriptor.Exports::source)
              .collect(Collectors.toSet()));
      // The operator's tools alone see the nodes' key layout, scripts and name rules.
      assertEquals(
          Set.of(
              "dev.redlock.node -> [dev.redlock.admin]",
              "dev.redlock.internal -> [dev.redlock.admin]",
              "dev.redlock.script -> [dev.redlock.admin]"),
          descriptor.exports().stream()
              .filter(ModuleDescriptor.Exports::isQualified)
              .map(e -> e.source() + " -> " + e.targets())
              .collect(Collectors.toSet()));
      assertEquals(
          Set.of("java.base", "redis.clients.jedis", "org.apache.commons.pool2", "org.slf4j"),
          descriptor.requires().stream()
              .map(ModuleDescriptor.Requires::name)
              .collect(Collectors.toSet()));
    }
  }
}
