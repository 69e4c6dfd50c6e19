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
 * where, checked on the sources so that they cannot drift: the acquire path reads downhill (API and
 * engine → quorum → node, each leaning on internal), a type is public only where another of the
 * library's packages uses it, and no other module reaches the library's unexported packages.
 */
class CodeLayoutTest {
  private static final Path CORE = Path.of("src/main/java/dev/redlock");

  /**
   * The operator's tools, the one other module the node, internal and script packages are exported
   * to (module-info's qualified exports): a seam it uses is a seam.
   */
  private static final Path ADMIN = Path.of("../redlock-admin/src/main/java/dev/redlock/admin");

  private static final List<String> UNEXPORTED =
      List.of("internal", "node", "quorum", "renewal", "script", "timing");
  private static final Pattern PUBLIC_TYPE =
      Pattern.compile(
          "^public (?:final |abstract |sealed |non-sealed )*(?:class|interface|record|enum|@interface)"
              + " (\\w+)",
          Pattern.MULTILINE);
  private static final Pattern IMPORT =
      Pattern.compile("^import (?:static )?(dev\\.redlock[\\w.]*);", Pattern.MULTILINE);

  @Test
  void theInternalPackageLeansOnNothingOfTheLibrary() {
    assertEquals(List.of(), importsOf(CORE.resolve("internal"), "dev.redlock."));
  }

  @Test
  void theScriptsAndTheClockLeanOnNothingOfTheLibraryButItsThreads() {
    assertEquals(List.of(), importsOf(CORE.resolve("script"), "dev.redlock."));
    assertEquals(
        List.of(), importsOutside(CORE.resolve("timing"), "dev.redlock.internal.IoThreads"));
  }

  @Test
  void renewalKnowsTheLeaseOnlyByWhatItNeedsOfIt() {
    assertEquals(
        List.of(),
        importsOutside(
            CORE.resolve("renewal"),
            "dev.redlock.timing.",
            "dev.redlock.spi.Tally",
            "dev.redlock.LeaseLostException",
            "dev.redlock.NodeOutcome"),
        "renewal must not reach into the engine, the store or the quorum");
  }

  @Test
  void oneNodeUsesTheInternalPackageTheScriptsAndTheRequestOnly() {
    assertEquals(
        List.of(),
        importsOutside(
            CORE.resolve("node"),
            "dev.redlock.internal.",
            "dev.redlock.script.",
            "dev.redlock.spi.LeaseRequest"),
        "one node's I/O must not know the quorum, the engine or the API, only what a lease asks");
  }

  @Test
  void theQuorumUsesTheNodesTheSpiAndTheNodeOutcomeOnly() {
    assertEquals(
        List.of(),
        importsOutside(
            CORE.resolve("quorum"),
            "dev.redlock.node.",
            "dev.redlock.internal.",
            "dev.redlock.spi.",
            "dev.redlock.timing.",
            "dev.redlock.NodeOutcome"),
        "the quorum must not call back into the engine or the API");
  }

  /**
   * A public type in an unexported package is a seam another of the library's packages uses; one
   * that only its own package uses is package-private. The internal package holds only what two or
   * more packages share: a type that one package uses lives in that package.
   */
  @Test
  void publicTypesOfTheUnexportedPackagesAreSeams() {
    List<String> wrong = new ArrayList<>();
    for (String pkg : UNEXPORTED) {
      for (Path file : javaFiles(CORE.resolve(pkg))) {
        Matcher m = PUBLIC_TYPE.matcher(read(file));
        if (!m.find()) {
          continue;
        }
        String type = m.group(1);
        List<String> users = packagesUsing(type, pkg);
        int needed = pkg.equals("internal") ? 2 : 1;
        if (users.size() < needed) {
          wrong.add(pkg + "." + type + " is public but used outside its package only by " + users);
        }
      }
    }
    assertEquals(List.of(), wrong);
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
              .filter(p -> !p.getFileName().toString().equals("redlock-admin"))
              .toList()) {
        Path src = module.resolve("src");
        if (!Files.isDirectory(src)) {
          continue;
        }
        for (String hit :
            importsOf(
                src,
                "dev.redlock.internal",
                "dev.redlock.node",
                "dev.redlock.quorum",
                "dev.redlock.renewal",
                "dev.redlock.script",
                "dev.redlock.timing")) {
          wrong.add(root.relativize(module) + ": " + hit);
        }
        for (Path file : javaFiles(src)) {
          String text = read(file);
          if (UNEXPORTED.stream().anyMatch(p -> text.contains("package dev.redlock." + p + ";"))) {
            wrong.add(root.relativize(file) + " declares a class inside an unexported package");
          }
        }
      }
    }
    assertEquals(List.of(), wrong);
  }

  /** The library's packages, other than {@code pkg}, whose code names {@code type}. */
  private static List<String> packagesUsing(String type, String pkg) {
    Pattern word = Pattern.compile("\\b" + type + "\\b");
    List<String> users = new ArrayList<>();
    for (Path file : javaFiles(CORE)) {
      String user = CORE.relativize(file.getParent()).toString();
      String name = user.isEmpty() ? "dev.redlock" : user;
      if (!user.equals(pkg)
          && !file.getFileName().toString().equals("package-info.java")
          && !users.contains(name)
          && word.matcher(read(file)).find()) {
        users.add(name);
      }
    }
    if (javaFiles(ADMIN).stream().anyMatch(file -> word.matcher(read(file)).find())) {
      users.add("dev.redlock.admin");
    }
    return users;
  }

  /**
   * "File imports X" for every library import under {@code dir} that is not one of {@code allowed}.
   */
  private static List<String> importsOutside(Path dir, String... allowed) {
    List<String> wrong = new ArrayList<>();
    for (String imported : importsOf(dir, "dev.redlock.")) {
      String target = imported.substring(imported.indexOf(" imports ") + " imports ".length());
      boolean ok = false;
      for (String prefix : allowed) {
        ok |= target.startsWith(prefix);
      }
      if (!ok) {
        wrong.add(imported);
      }
    }
    return wrong;
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
