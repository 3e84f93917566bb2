package org.mori4j.bench.docs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in the project's markdown (the READMEs and the modules' docs/ folders) points at a file that
 * exists, and a link with {@code #anchor} into a markdown file at one of its headings (GitHub's slug: lower case,
 * punctuation dropped, spaces to dashes). Why: the module READMEs were cut into docs/ pages, and a page that moves
 * again must take its links along. Recorded results ({@code bench/results/}) are left out: they are records of their
 * day. Links inside fenced code blocks are not links.
 */
class DocLinksTest {
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#+\\s+(.*)$");
  private final Map<Path, Set<String>> anchors = new HashMap<>();

  @Test
  void everyRelativeLinkAndAnchorResolves() throws IOException {
    Path root = Path.of("..").toAbsolutePath().normalize();
    assertTrue(Files.exists(root.resolve("README.md")) && Files.isDirectory(root.resolve("bench")),
        "run from the bench module: " + root + " should be the repository root");
    List<Path> pages;
    try (Stream<Path> s = Files.walk(root)) {
      pages = s.filter(p -> p.toString().endsWith(".md")).filter(p -> keep(root.relativize(p))).toList();
    }
    List<String> broken = new ArrayList<>();
    for (Path page : pages) {
      String text = Files.readString(page).replaceAll("(?s)```.*?```", "");
      Matcher m = LINK.matcher(text);
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("[a-z]+:.*")) continue; // http:, https:, mailto:
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        Path to = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        if (!Files.exists(to)) {
          broken.add(root.relativize(page) + " -> " + target + " (no such file)");
        } else if (hash >= 0 && to.toString().endsWith(".md") && !headings(to).contains(target.substring(hash + 1))) {
          broken.add(root.relativize(page) + " -> " + target + " (no such heading)");
        }
      }
    }
    assertTrue(pages.size() > 10, "found only " + pages.size() + " markdown pages under " + root);
    assertTrue(broken.isEmpty(), broken.size() + " broken link(s):\n" + String.join("\n", broken));
  }

  /** Markdown the project maintains: not build output, not hidden folders, not the recorded results. */
  private static boolean keep(Path rel) {
    for (Path part : rel) {
      String n = part.toString();
      if (n.equals("target") || n.startsWith(".") || n.equals("node_modules")) return false;
    }
    return !rel.startsWith(Path.of("bench", "results"));
  }

  private Set<String> headings(Path page) {
    return anchors.computeIfAbsent(page, p -> {
      Set<String> out = new HashSet<>();
      try {
        for (String line : Files.readAllLines(p)) {
          Matcher h = HEADING.matcher(line);
          if (h.matches()) out.add(slug(h.group(1)));
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot read " + p, e);
      }
      return out;
    });
  }

  /** GitHub's anchor for a heading. */
  static String slug(String heading) {
    return heading.strip().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-');
  }
}
