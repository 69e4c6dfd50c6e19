package dev.redlock.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.config.RedlockConfig;
import dev.redlock.testsupport.NullSafetyCheck;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The operator's API: one exported package, null-safe like the lock's own (NullSafetyCheck). */
class AdminApiTest {
  @Test
  void exportsOnePackageAndPassesOnTheLocksApi() throws Exception {
    Path classes =
        Path.of(RedlockAdmin.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
      ModuleDescriptor descriptor = ModuleDescriptor.read(in);
      assertEquals("dev.redlock.admin", descriptor.name());
      assertEquals(
          Set.of("dev.redlock.admin"),
          descriptor.exports().stream()
              .map(ModuleDescriptor.Exports::source)
              .collect(Collectors.toSet()));
      assertTrue(
          descriptor.requires().stream()
              .anyMatch(
                  r ->
                      r.name().equals("dev.redlock")
                          && r.modifiers().contains(ModuleDescriptor.Requires.Modifier.TRANSITIVE)),
          "RedlockConfig is in its signatures");
    }
  }

  @Test
  void everyPublicMethodRefusesANullArgumentAtOnceNamingIt() throws Exception {
    RedlockConfig config = RedlockConfig.builder().node("redis://127.0.0.1:1").build();
    try (RedlockAdmin admin = RedlockAdmin.create(config)) {
      NullSafetyCheck check =
          new NullSafetyCheck(
              Map.of(RedlockAdmin.class, admin),
              Set.of(
                  // record components documented "null when …"
                  "RedlockAdmin.GuardView.<init>#2", // marker: null when there is none
                  "RedlockAdmin.GuardView.<init>#3", // unknown: null when the node can vote
                  "LockStatus.Node.<init>#1", // error: null when the node was read
                  "LockStatus.Node.<init>#4", // owner hash: null when free
                  "ReadWriteStatus.Node.<init>#1", // error: null when the node was read
                  "ReadWriteStatus.Node.<init>#4", // writer hash: null when no writer
                  "NewNodeCheck.<init>#6", // markerBefore: null when there was none
                  "NewNodeCheck.<init>#7"), // markerWritten: null when nothing was written
              type ->
                  type == NewNodeCheck.Verdict.class
                      ? NewNodeCheck.Verdict.NEW
                      : type == RedlockConfig.class ? config : null);
      List<Class<?>> types =
          NullSafetyCheck.publicTypesOf("dev.redlock.admin").stream()
              .filter(NullSafetyCheck::takesReferences)
              .toList();
      assertTrue(types.size() >= 6, "found only " + types);
      assertEquals(List.of(), check.wrongIn(types));
      assertTrue(check.checked() > 20, "checked only " + check.checked());
    }
  }
}
