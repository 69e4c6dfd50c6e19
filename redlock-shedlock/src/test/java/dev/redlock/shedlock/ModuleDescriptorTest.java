package dev.redlock.shedlock;

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
 * Module-path users see one package, the provider's; {@code dev.redlock} (the Redlock it takes) and
 * ShedLock's core (the interfaces it implements) come with it ({@code requires transitive}).
 */
class ModuleDescriptorTest {
  @Test
  void exportsTheProviderAndPassesOnTheModulesItsSignaturesUse() throws Exception {
    Path classes =
        Path.of(
            RedlockLockProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
      ModuleDescriptor descriptor = ModuleDescriptor.read(in);
      assertEquals("dev.redlock.shedlock", descriptor.name());
      assertEquals(
          Set.of("dev.redlock.shedlock"),
          descriptor.exports().stream()
              .map(ModuleDescriptor.Exports::source)
              .collect(Collectors.toSet()));
      assertEquals(
          Set.of("java.base", "dev.redlock", "net.javacrumbs.shedlock.core", "org.slf4j"),
          descriptor.requires().stream().map(Requires::name).collect(Collectors.toSet()));
      assertEquals(
          Set.of("dev.redlock", "net.javacrumbs.shedlock.core"),
          descriptor.requires().stream()
              .filter(r -> r.modifiers().contains(Requires.Modifier.TRANSITIVE))
              .map(Requires::name)
              .collect(Collectors.toSet()));
    }
  }
}
