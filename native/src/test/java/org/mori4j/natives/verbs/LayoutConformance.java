package org.mori4j.natives.verbs;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Compares what a C probe printed ({@code sizeof.T}, {@code T.field}, {@code T.field#size}, {@code CONSTANT})
 * with Java layouts and constant classes, and lists every difference: a wrong size or offset, a constant
 * with another value, a Java field or constant the probe did not print (so it would go unchecked), and a
 * probe line Java has nothing for. Anonymous C unions are {@code $anon...} members in Java and are looked
 * through, as C's {@code offsetof} looks through them.
 */
public final class LayoutConformance {
  private final Map<String, Long> probe;
  private final List<MemoryLayout> layouts;
  private final List<Class<?>> constantClasses;
  private final List<String> mismatches = new ArrayList<>();
  private int checked;

  public LayoutConformance(Map<String, Long> probe, List<MemoryLayout> layouts, List<Class<?>> constantClasses) {
    this.probe = probe;
    this.layouts = layouts;
    this.constantClasses = constantClasses;
  }

  /** Every mismatch, one per line; empty when the Java side agrees with the header on every number. */
  public List<String> mismatches() {
    mismatches.clear();
    checked = 0;
    probe.forEach(this::checkProbeLine);
    for (MemoryLayout l : layouts) requireProbed(l.name().orElseThrow(), "", l);
    for (Class<?> c : constantClasses) {
      for (Field f : c.getFields()) {
        if (isConstant(f) && !probe.containsKey(f.getName())) {
          mismatches.add(c.getSimpleName() + "." + f.getName() + ": not printed by the probe (unchecked)");
        }
      }
    }
    return mismatches;
  }

  /** How many numbers the last {@link #mismatches()} compared. */
  public int checked() {
    return checked;
  }

  private void checkProbeLine(String key, long cValue) {
    if (key.startsWith("sizeof.")) {
      String type = key.substring("sizeof.".length());
      layout(type).ifPresentOrElse(l -> compare(key, cValue, l.byteSize()),
          () -> mismatches.add(key + ": no Java layout named " + type));
      return;
    }
    int dot = key.indexOf('.');
    if (dot < 0) {
      checkConstant(key, cValue);
      return;
    }
    String type = key.substring(0, dot);
    boolean size = key.endsWith("#size");
    String field = key.substring(dot + 1, size ? key.length() - "#size".length() : key.length());
    Optional<MemoryLayout> l = layout(type);
    if (l.isEmpty()) {
      mismatches.add(key + ": no Java layout named " + type);
      return;
    }
    PathElement[] path = resolve(l.get(), field);
    if (path == null) {
      mismatches.add(key + ": no field " + field + " in Java layout " + type);
      return;
    }
    compare(key, cValue, size ? l.get().select(path).byteSize() : l.get().byteOffset(path));
  }

  private void checkConstant(String name, long cValue) {
    for (Class<?> c : constantClasses) {
      try {
        Field f = c.getField(name);
        if (isConstant(f)) {
          compare(c.getSimpleName() + "." + name, cValue, ((Number) f.get(null)).longValue());
          return;
        }
      } catch (NoSuchFieldException e) {
        // try the next class
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(e);
      }
    }
    mismatches.add(name + ": the probe prints it but no Java constant has that name");
  }

  private void compare(String what, long c, long java) {
    checked++;
    if (c != java) mismatches.add(what + ": C says " + c + ", Java says " + java);
  }

  private Optional<MemoryLayout> layout(String name) {
    return layouts.stream().filter(l -> l.name().orElse("").equals(name)).findFirst();
  }

  /** The Java path of a C field path, looking through {@code $anon} unions; null when there is none. */
  static PathElement[] resolve(MemoryLayout root, String cPath) {
    List<String> names = new ArrayList<>();
    MemoryLayout at = root;
    for (String part : cPath.split("\\.")) {
      List<String> step = find(at, part);
      if (step == null) return null;
      names.addAll(step);
      at = root.select(CLayout.path(String.join(".", names)));
    }
    return CLayout.path(String.join(".", names));
  }

  private static List<String> find(MemoryLayout in, String name) {
    if (!(in instanceof GroupLayout g)) return null;
    for (MemoryLayout m : g.memberLayouts()) {
      String n = m.name().orElse("");
      if (n.equals(name)) return List.of(n);
    }
    for (MemoryLayout m : g.memberLayouts()) {
      String n = m.name().orElse("");
      if (n.startsWith("$anon")) {
        List<String> inner = find(m, name);
        if (inner != null) {
          List<String> path = new ArrayList<>(List.of(n));
          path.addAll(inner);
          return path;
        }
      }
    }
    return null;
  }

  /** Every named Java field must have an offset line, down into nested groups that are not checked alone. */
  private void requireProbed(String type, String prefix, MemoryLayout l) {
    if (!(l instanceof GroupLayout g)) return;
    for (MemoryLayout m : g.memberLayouts()) {
      String n = m.name().orElse(null);
      if (n == null) continue;
      if (n.startsWith("$anon")) {
        requireProbed(type, prefix, m);
        continue;
      }
      String key = type + "." + prefix + n;
      if (!probe.containsKey(key)) mismatches.add(key + ": Java field not printed by the probe (unchecked)");
      if (!isCheckedAlone(m)) requireProbed(type, prefix + n + ".", m);
    }
  }

  private boolean isCheckedAlone(MemoryLayout m) {
    return layouts.stream().anyMatch(l -> l.withoutName().equals(m.withoutName()));
  }

  private static boolean isConstant(Field f) {
    int mod = f.getModifiers();
    return Modifier.isStatic(mod) && Modifier.isFinal(mod) && Modifier.isPublic(mod)
        && (f.getType() == int.class || f.getType() == long.class);
  }
}
