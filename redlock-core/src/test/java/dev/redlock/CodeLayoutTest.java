package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The rooms of the code (docs/design.md, "How the code is laid out") and the rule for what goes
 * where, checked on the sources so that they cannot drift: the acquire path reads downhill (API →
 * quorum → internal), and no other module reaches the library's unexported packages.
 */
class CodeLayoutTest {
  private static final Path CORE = Path.of("src/main/java/dev/redlock");
  private static final Pattern IMPORT =
      Pattern.compile("^import (?:static )?(dev\\.redlock[\\w.]*);", Pattern.MULTILINE);

  @Test
  void theInternalPackageLeansOnNothingOfTheLibrary() {
    assertEquals(List.of(), importsOf(CORE.resolve("internal"), "dev.redlock."));
  }

  @Test
  void theQuorumUsesTheNodesTheSpiAndTheNodeOutcomeOnly() {
    List<String> wrong = new ArrayList<>();
    for (String imported : importsOf(CORE.resolve("quorum"), "dev.redlock.")) {
      String target = imported.substring(imported.indexOf(" imports ") + " imports ".length());
      boolean allowed =
          target.startsWith("dev.redlock.internal.")
              || target.startsWith("dev.redlock.spi.")
              || target.equals("dev.redlock.NodeOutcome");
      if (!allowed) {
        wrong.add(imported);
      }
    }
    assertEquals(List.of(), wrong, "the quorum must not call back into the engine or the API");
  }

  @Test
  void noOtherModuleReachesTheUnexportedPackages() throws IOException {
    Path root = Path.of("..").toAbsolutePath().normalize();
    assertTrue(Files.exists(root.resolve("redlock-core/pom.xml")), "run from redlock-core");
    List<String> wrong = new ArrayList<>();
    try (Stream<Path> modules = Files.list(root)) {
      for (Path module :
          modules
              .filter(p -> p.getFileName().toString().startsWith("redlock-"))
              .filter(p -> !p.getFileName().toString().equals("redlock-core"))
              .toList()) {
        Path src = module.resolve("src");
        if (!Files.isDirectory(src)) {
          continue;
        }
        for (String hit : importsOf(src, "dev.redlock.internal", "dev.redlock.quorum")) {
          wrong.add(root.relativize(module) + ": " + hit);
        }
        for (Path file : javaFiles(src)) {
          String text = read(file);
          if (text.contains("package dev.redlock.internal;")
              || text.contains("package dev.redlock.quorum;")) {
            wrong.add(root.relativize(file) + " declares a class inside an unexported package");
          }
        }
      }
    }
    assertEquals(List.of(), wrong);
  }

  /**
   * "File imports X" for every import under {@code dir} that starts with one of {@code prefixes}.
   */
  private static List<String> importsOf(Path dir, String... prefixes) {
    List<String> out = new ArrayList<>();
    for (Path file : javaFiles(dir)) {
      Matcher m = IMPORT.matcher(read(file));
      while (m.find()) {
        for (String prefix : prefixes) {
          if (m.group(1).startsWith(prefix)) {
            out.add(file.getFileName() + " imports " + m.group(1));
          }
        }
      }
    }
    return out;
  }

  private static List<Path> javaFiles(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
