import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Checks a staged release (run by .ci/check-release; JDK only, no dependencies):
 *
 * <pre>java .ci/CheckRelease.java FIRST_STAGING [SECOND_STAGING]</pre>
 *
 * <ul>
 *   <li>the published modules are exactly the BOM's entries: each staged with a jar, a sources
 *       jar, a javadoc jar and a POM (with their checksums), and nothing else staged but the
 *       parent and the BOM;
 *   <li>the BOM has no parent and manages only our own modules, at its own version;
 *   <li>every staged POM carries, itself or through its staged parent, what a public repository
 *       requires: name and description (its own), url, a license with name and url, a developer
 *       with a name, and scm url and connection;
 *   <li>every published jar is a named module (module-info or Automatic-Module-Name), names
 *       distinct; sources jars hold sources, javadoc jars an index; one .buildinfo is staged;
 *   <li>given a second staging of the same commit, every staged file is byte-identical
 *       (reproducible build).
 * </ul>
 *
 * Prints every failure, then exits 1 if there was one.
 */
public class CheckRelease {
  static final String GROUP_PATH = "dev/redlock";
  static final String GROUP_ID = "dev.redlock";
  static final String PARENT = "redlock-parent";
  static final String BOM = "redlock-bom";

  final List<String> failures = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    if (args.length < 1 || args.length > 2) {
      System.err.println("usage: java .ci/CheckRelease.java FIRST_STAGING [SECOND_STAGING]");
      System.exit(2);
    }
    CheckRelease check = new CheckRelease();
    Staging first = Staging.read(Path.of(args[0]));
    check.release(first);
    if (args.length == 2) {
      check.reproducible(first, Staging.read(Path.of(args[1])));
    }
    if (!check.failures.isEmpty()) {
      System.out.println("release check FAILED:");
      check.failures.forEach(f -> System.out.println("  - " + f));
      System.exit(1);
    }
    System.out.println("release check OK");
  }

  void fail(String message) {
    failures.add(message);
  }

  void release(Staging staging) throws Exception {
    Path bomPom = staging.file(BOM, "", "pom");
    if (bomPom == null) {
      fail("no " + BOM + " POM staged under " + staging.root);
      return;
    }
    Element bom = xml(bomPom);
    if (child(bom, "parent") != null) {
      fail(BOM + ": the staged POM has a parent (its dependencyManagement would come along)");
    }
    Set<String> published = new TreeSet<>();
    for (Element dependency : path(bom, "dependencyManagement", "dependencies", "dependency")) {
      String artifactId = text(dependency, "artifactId");
      String version = text(dependency, "version");
      if (!GROUP_ID.equals(text(dependency, "groupId"))) {
        fail(BOM + ": manages " + text(dependency, "groupId") + ":" + artifactId
            + ", which is not ours");
        continue;
      }
      if (!"${project.version}".equals(version) && !staging.version.equals(version)) {
        fail(BOM + ": " + artifactId + " at " + version + ", not the BOM's version");
      }
      published.add(artifactId);
    }

    if (published.isEmpty()) {
      fail(BOM + ": manages no module");
    }

    Set<String> stagedModules = new TreeSet<>(staging.artifactIds());
    stagedModules.remove(PARENT);
    stagedModules.remove(BOM);
    for (String artifactId : stagedModules) {
      if (!published.contains(artifactId)) {
        fail(artifactId + ": staged but not in " + BOM
            + " (add it there, or set maven.deploy.skip in its pom)");
      }
    }
    for (String artifactId : published) {
      if (!stagedModules.contains(artifactId)) {
        fail(artifactId + ": in " + BOM + " but not staged");
      }
    }

    Map<String, String> moduleNames = new TreeMap<>();
    for (String artifactId : published) {
      for (String[] wanted :
          new String[][] {{"", "jar"}, {"sources", "jar"}, {"javadoc", "jar"}, {"", "pom"}}) {
        Path file = staging.file(artifactId, wanted[0], wanted[1]);
        String what = artifactId + (wanted[0].isEmpty() ? "" : "-" + wanted[0]) + "." + wanted[1];
        if (file == null) {
          fail(what + ": not staged");
          continue;
        }
        if (!Files.exists(Path.of(file + ".sha1")) || !Files.exists(Path.of(file + ".md5"))) {
          fail(what + ": staged without its .sha1 and .md5");
        }
      }
      Path jar = staging.file(artifactId, "", "jar");
      if (jar != null) {
        String name = moduleName(artifactId, jar);
        if (name != null) {
          String other = moduleNames.put(name, artifactId);
          if (other != null) {
            fail(artifactId + ": module name " + name + " is also " + other + "'s");
          }
        }
      }
      Path sources = staging.file(artifactId, "sources", "jar");
      if (sources != null && !contains(sources, e -> e.endsWith(".java"))) {
        fail(artifactId + "-sources.jar: no .java file in it");
      }
      Path javadoc = staging.file(artifactId, "javadoc", "jar");
      if (javadoc != null && !contains(javadoc, "index.html"::equals)) {
        fail(artifactId + "-javadoc.jar: no index.html in it");
      }
    }

    // Signed (-Psign) or not at all: a repository that wants signatures wants one per file.
    if (staging.files.keySet().stream().anyMatch(k -> k.endsWith(".asc"))) {
      for (String key : staging.files.keySet()) {
        if (!key.endsWith(".asc") && !staging.files.containsKey(key + ".asc")) {
          fail(key + ": staged unsigned beside signed files");
        }
      }
    }

    long buildinfos = staging.files.keySet().stream().filter(k -> k.endsWith(":buildinfo")).count();
    if (buildinfos != 1) {
      fail("expected one .buildinfo staged (maven-artifact-plugin), found " + buildinfos);
    }

    for (String artifactId : staging.artifactIds()) {
      Path pom = staging.file(artifactId, "", "pom");
      if (pom != null) {
        metadata(staging, artifactId, pom);
      } else if (!published.contains(artifactId)) {
        fail(artifactId + ": staged without a POM");
      }
    }

    System.out.printf(
        "staged %s %s: %d published modules %s, module names %s, plus %s and %s%n",
        GROUP_ID, staging.version, published.size(), published, moduleNames, PARENT, BOM);
  }

  /** The jar's module name, from module-info.class or else Automatic-Module-Name; or a failure. */
  String moduleName(String artifactId, Path jar) throws IOException {
    try (JarFile file = new JarFile(jar.toFile())) {
      var descriptor = file.getEntry("module-info.class");
      String name;
      if (descriptor != null) {
        try (InputStream in = file.getInputStream(descriptor)) {
          name = ModuleDescriptor.read(in).name();
        }
      } else {
        var manifest = file.getManifest();
        name =
            manifest == null
                ? null
                : manifest.getMainAttributes().getValue("Automatic-Module-Name");
        if (name == null || name.isBlank()) {
          fail(artifactId + ".jar: neither a module-info.class nor an Automatic-Module-Name");
          return null;
        }
        try {
          ModuleDescriptor.newAutomaticModule(name);
        } catch (IllegalArgumentException e) {
          fail(artifactId + ".jar: Automatic-Module-Name '" + name + "' is not a module name");
          return null;
        }
      }
      if (!name.equals(GROUP_ID) && !name.startsWith(GROUP_ID + ".")) {
        fail(artifactId + ".jar: module name " + name + " is not under " + GROUP_ID);
      }
      return name;
    }
  }

  /** What a public repository requires of a POM, the POM's own or inherited from its parent. */
  void metadata(Staging staging, String artifactId, Path pomFile) throws Exception {
    Element pom = xml(pomFile);
    List<Element> lineage = new ArrayList<>();
    lineage.add(pom);
    Element parent = child(pom, "parent");
    while (parent != null) {
      String parentId = text(parent, "artifactId");
      Path parentPom =
          GROUP_ID.equals(text(parent, "groupId")) ? staging.file(parentId, "", "pom") : null;
      if (parentPom == null) {
        fail(artifactId + ": its parent " + text(parent, "groupId") + ":" + parentId
            + " is not staged (users could not resolve the POM)");
        break;
      }
      Element parentModel = xml(parentPom);
      lineage.add(parentModel);
      parent = child(parentModel, "parent");
    }
    // name is not inherited in Maven, and a description inherited from the parent says nothing
    // about this artifact: both must be the POM's own.
    for (String own : List.of("name", "description")) {
      if (text(pom, own) == null) {
        fail(artifactId + ": the POM has no <" + own + "> of its own");
      }
    }
    if (inherited(lineage, "url") == null) {
      fail(artifactId + ": no <url>");
    }
    Element licenses = inheritedElement(lineage, "licenses");
    List<Element> license = licenses == null ? List.of() : children(licenses, "license");
    if (license.isEmpty()
        || license.stream().anyMatch(l -> text(l, "name") == null || text(l, "url") == null)) {
      fail(artifactId + ": no <license> with a <name> and a <url>");
    }
    Element developers = inheritedElement(lineage, "developers");
    List<Element> developer = developers == null ? List.of() : children(developers, "developer");
    if (developer.isEmpty() || developer.stream().anyMatch(d -> text(d, "name") == null)) {
      fail(artifactId + ": no <developer> with a <name>");
    }
    Element scm = inheritedElement(lineage, "scm");
    if (scm == null || text(scm, "url") == null || text(scm, "connection") == null) {
      fail(artifactId + ": no <scm> with a <url> and a <connection>");
    }
  }

  void reproducible(Staging first, Staging second) throws Exception {
    Set<String> keys = new TreeSet<>(first.files.keySet());
    keys.addAll(second.files.keySet());
    int same = 0;
    keys.removeIf(k -> k.endsWith(".asc")); // a signature holds the time it was made
    for (String key : keys) {
      Path a = first.files.get(key);
      Path b = second.files.get(key);
      if (a == null || b == null) {
        fail("reproducible: " + key + " staged by only one of the two builds");
      } else if (!sha256(a).equals(sha256(b))) {
        fail("reproducible: " + key + " differs between two builds of one commit ("
            + a.getFileName() + " vs " + b.getFileName() + ")");
      } else {
        same++;
      }
    }
    System.out.printf(
        "reproducible: %d of %d staged files byte-identical across two clean builds%n",
        same, keys.size());
  }

  /** One staging directory: its files by artifactId:classifier:extension, version aside. */
  record Staging(Path root, String version, Map<String, Path> files) {
    static Staging read(Path root) throws IOException {
      Path group = root.resolve(GROUP_PATH);
      if (!Files.isDirectory(group)) {
        throw new IllegalArgumentException("nothing staged for " + GROUP_ID + " under " + root);
      }
      Map<String, Path> files = new TreeMap<>();
      Set<String> versions = new LinkedHashSet<>();
      try (Stream<Path> all = Files.walk(group)) {
        for (Path file : (Iterable<Path>) all.filter(Files::isRegularFile)::iterator) {
          Path relative = group.relativize(file);
          String name = file.getFileName().toString();
          if (relative.getNameCount() != 3
              || name.startsWith("maven-metadata")
              || name.matches(".*\\.(md5|sha1|sha256|sha512)$")) {
            continue; // metadata and checksums: written by the deploy, stamped with its time
          }
          String artifactId = relative.getName(0).toString();
          String version = relative.getName(1).toString();
          versions.add(version);
          // name: artifactId-version[-classifier].extension, where a deployed SNAPSHOT's
          // version reads base-yyyyMMdd.HHmmss-n
          String versionPattern = version.endsWith("-SNAPSHOT")
              ? Pattern.quote(version.substring(0, version.length() - "SNAPSHOT".length()))
                  + "(?:SNAPSHOT|\\d{8}\\.\\d{6}-\\d+)"
              : Pattern.quote(version);
          Matcher parts =
              Pattern.compile(Pattern.quote(artifactId) + "-" + versionPattern
                      + "(?:-([^.]+))?\\.(.+)")
                  .matcher(name);
          if (!parts.matches()) {
            throw new IllegalArgumentException("unexpected file in the staging: " + file);
          }
          String classifier = parts.group(1) == null ? "" : parts.group(1);
          String extension = parts.group(2);
          files.put(artifactId + ":" + classifier + ":" + extension, file);
        }
      }
      if (versions.size() != 1) {
        throw new IllegalArgumentException("expected one version staged, found " + versions);
      }
      return new Staging(root, versions.iterator().next(), files);
    }

    Set<String> artifactIds() {
      Set<String> ids = new TreeSet<>();
      files.keySet().forEach(k -> ids.add(k.substring(0, k.indexOf(':'))));
      return ids;
    }

    Path file(String artifactId, String classifier, String extension) {
      return files.get(artifactId + ":" + classifier + ":" + extension);
    }
  }

  static boolean contains(Path jar, java.util.function.Predicate<String> entry) throws IOException {
    try (JarFile file = new JarFile(jar.toFile())) {
      return file.stream().anyMatch(e -> entry.test(e.getName()));
    }
  }

  static String sha256(Path file) throws Exception {
    return HexFormat.of()
        .formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }

  static Element xml(Path file) throws Exception {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setNamespaceAware(false);
    Document document = factory.newDocumentBuilder().parse(file.toFile());
    return document.getDocumentElement();
  }

  static List<Element> children(Element parent, String name) {
    List<Element> found = new ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        found.add(e);
      }
    }
    return found;
  }

  static Element child(Element parent, String name) {
    List<Element> found = children(parent, name);
    return found.isEmpty() ? null : found.get(0);
  }

  static List<Element> path(Element from, String... names) {
    List<Element> level = List.of(from);
    for (String name : names) {
      List<Element> next = new ArrayList<>();
      level.forEach(e -> next.addAll(children(e, name)));
      level = next;
    }
    return level;
  }

  /** The element's trimmed text, or null if it is absent or blank. */
  static String text(Element parent, String name) {
    Element e = child(parent, name);
    String text = e == null ? null : e.getTextContent().strip();
    return text == null || text.isEmpty() ? null : text;
  }

  static String inherited(List<Element> lineage, String name) {
    for (Element pom : lineage) {
      String value = text(pom, name);
      if (value != null) {
        return value;
      }
    }
    return null;
  }

  static Element inheritedElement(List<Element> lineage, String name) {
    for (Element pom : lineage) {
      Element e = child(pom, name);
      if (e != null) {
        return e;
      }
    }
    return null;
  }
}
