package org.mori4j.bench;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * An SVG of {@code SvgPlot} parsed by the JDK's XML parser (which throws on anything not well formed): its root,
 * its series groups by name with the markers each holds, and the legend's entries.
 */
record SvgDocument(Element root, Map<String, Element> series, List<String> legend) {
  static SvgDocument parse(Path file) throws Exception {
    return parse(Files.readString(file));
  }

  static SvgDocument parse(String svg) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    Document doc = f.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    Element root = doc.getDocumentElement();
    if (!root.getLocalName().equals("svg") || !"http://www.w3.org/2000/svg".equals(root.getNamespaceURI()))
      throw new AssertionError("root is not an SVG element: " + root.getTagName());
    Map<String, Element> series = new LinkedHashMap<>();
    List<String> legend = new ArrayList<>();
    NodeList groups = root.getElementsByTagNameNS("http://www.w3.org/2000/svg", "g");
    for (int i = 0; i < groups.getLength(); i++) {
      Element g = (Element) groups.item(i);
      if (g.getAttribute("class").equals("series")) {
        if (series.put(g.getAttribute("data-name"), g) != null) throw new AssertionError("two series named " + g.getAttribute("data-name"));
      } else if (g.getAttribute("class").equals("legend-entry")) {
        legend.add(g.getAttribute("data-name"));
      }
    }
    return new SvgDocument(root, series, legend);
  }

  /** Markers of {@code series} in {@code panel} for {@code stat} (bw, p50, p99). */
  int points(String series, String panel, String stat) {
    Element g = series().get(series);
    if (g == null) throw new AssertionError("no series " + series + " in " + series().keySet());
    NodeList circles = g.getElementsByTagNameNS("http://www.w3.org/2000/svg", "circle");
    int n = 0;
    for (int i = 0; i < circles.getLength(); i++) {
      Element c = (Element) circles.item(i);
      if (c.getAttribute("class").equals("point") && c.getAttribute("data-panel").equals(panel) && c.getAttribute("data-stat").equals(stat)) n++;
    }
    return n;
  }

  /** Elements of class {@code cls} in {@code series}, e.g. "level" lines. */
  int elements(String series, String tag, String cls) {
    NodeList all = series().get(series).getElementsByTagNameNS("http://www.w3.org/2000/svg", tag);
    int n = 0;
    for (int i = 0; i < all.getLength(); i++) if (((Element) all.item(i)).getAttribute("class").equals(cls)) n++;
    return n;
  }
}
