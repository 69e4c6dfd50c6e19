package dev.redlock.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleDescriptor.Requires;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Module-path users see one package, the entry point's; the lease types and {@code DataSource} in
 * its signatures come with it ({@code requires transitive}), so a module that requires {@code
 * dev.redlock.jdbc} compiles without naming {@code dev.redlock} or {@code java.sql} itself.
 */
class ModuleDescriptorTest {
  @Test
  void exportsTheEntryPointAndPassesOnTheModulesItsSignaturesUse() throws Exception {
    Path classes =
        Path.of(JdbcLeases.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
      ModuleDescriptor descriptor = ModuleDescriptor.read(in);
      assertEquals("dev.redlock.jdbc", descriptor.name());
      assertEquals(
          Set.of("dev.redlock.jdbc"),
          descriptor.exports().stream()
              .map(ModuleDescriptor.Exports::source)
              .collect(Collectors.toSet()));
      assertEquals(
          Set.of("java.base", "dev.redlock", "java.sql", "org.slf4j"),
          descriptor.requires().stream().map(Requires::name).collect(Collectors.toSet()));
      assertEquals(
          Set.of("dev.redlock", "java.sql"),
          descriptor.requires().stream()
              .filter(r -> r.modifiers().contains(Requires.Modifier.TRANSITIVE))
              .map(Requires::name)
              .collect(Collectors.toSet()));
    }
  }
}
