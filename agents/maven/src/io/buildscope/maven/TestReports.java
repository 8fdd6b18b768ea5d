package io.buildscope.maven;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The tests of a Surefire or Failsafe execution, from the XML reports the plugin wrote
 * (TEST-*.xml): each test case becomes TestStarted / TestFinished events, one pair per attempt
 * (a `flakyFailure` is a failed attempt before the passing one; a `rerunFailure` a failed rerun
 * after the first failure), with the failure's type, message and stack trace, the skip reason and
 * the output the report holds (Surefire keeps it for failed tests only). The plugin's API is not
 * reachable from a core extension; its reports are its public output.
 */
final class TestReports {
    private TestReports() {
    }

    /** A test's attempt: what its TestStarted and TestFinished say, and when (ms after the execution started). */
    static final class Attempt {
        final Map<String, Object> started;
        final Map<String, Object> finished;
        final List<Map<String, Object>> output = new ArrayList<Map<String, Object>>();
        long offset;
        long duration;

        Attempt(Map<String, Object> started, Map<String, Object> finished) {
            this.started = started;
            this.finished = finished;
        }
    }

    /** The report files of an execution written since it started (older ones are an earlier build's). */
    static List<File> reports(File dir, long since) {
        List<File> out = new ArrayList<File>();
        File[] files = dir.listFiles((d, name) -> name.startsWith("TEST-") && name.endsWith(".xml"));
        if (files == null) return out;
        Arrays.sort(files);
        // A second of slack: some file systems keep modification times in whole seconds.
        for (File f : files) if (f.lastModified() >= since - 1000) out.add(f);
        return out;
    }

    static DocumentBuilder parser() throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        // Reports never need a DTD or outside entities: refuse them.
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
        f.setExpandEntityReferences(false);
        f.setNamespaceAware(false);
        return f.newDocumentBuilder();
    }

    /** The attempts of every test case of one report, in order; the task names the execution that ran them. */
    static List<Attempt> read(File report, String task, int testOutputChars, boolean withOutput) throws Exception {
        Document doc = parser().parse(report);
        List<Attempt> out = new ArrayList<Attempt>();
        long offset = 0;
        NodeList cases = doc.getElementsByTagName("testcase");
        for (int i = 0; i < cases.getLength(); i++) {
            Element c = (Element) cases.item(i);
            String suite = attr(c, "classname");
            if (suite == null) suite = attr((Element) c.getParentNode(), "name");
            String name = attr(c, "name");
            long duration = millis(attr(c, "time"));
            List<Element> flaky = children(c, "flakyFailure", "flakyError");
            List<Element> reruns = children(c, "rerunFailure", "rerunError");
            Element failure = first(c, "failure", "error");
            Element skipped = first(c, "skipped");
            // The attempts in the order they ran: flaky failures, then the last (passing) run; or the
            // first failure, then its failed reruns.
            List<Element[]> attempts = new ArrayList<Element[]>();
            for (Element f : flaky) attempts.add(new Element[] {f, f});
            if (failure != null) {
                attempts.add(new Element[] {failure, c});
                for (Element f : reruns) attempts.add(new Element[] {f, f});
            } else {
                attempts.add(new Element[] {null, c});
            }
            int n = 0;
            for (Element[] a : attempts) {
                n++;
                Map<String, Object> started = Capture.map("suite", suite, "name", name, "task", task);
                if (attempts.size() > 1) started.put("attempt", n);
                Map<String, Object> finished = Capture.map();
                if (a[0] != null) {
                    finished.put("outcome", "failed");
                    finished.put("failure", failureOf(a[0]));
                } else if (skipped != null) {
                    finished.put("outcome", "skipped");
                    String reason = attr(skipped, "message");
                    if (reason != null) finished.put("skipReason", Bounds.head(reason, Bounds.MESSAGE));
                } else {
                    finished.put("outcome", "passed");
                }
                if (attempts.size() > 1) finished.put("attempt", n);
                Attempt attempt = new Attempt(started, finished);
                // The report has one time per test case: its attempts share it.
                attempt.offset = offset;
                attempt.duration = duration / attempts.size();
                offset += attempt.duration;
                if (withOutput) {
                    int room = testOutputChars;
                    for (String stream : new String[] {"stdout", "stderr"}) {
                        Element o = first(a[1], stream.equals("stdout") ? "system-out" : "system-err");
                        String text = o == null ? null : o.getTextContent();
                        if (text == null || text.isEmpty() || room <= 0) continue;
                        text = Bounds.head(text, room);
                        room -= text.length();
                        attempt.output.add(Capture.map("stream", stream, "text", text));
                    }
                }
                out.add(attempt);
            }
        }
        return out;
    }

    static Map<String, Object> failureOf(Element f) {
        String type = attr(f, "type");
        String message = attr(f, "message");
        Element nested = first(f, "stackTrace");
        String trace = nested != null ? nested.getTextContent() : directText(f);
        if (trace != null && trace.trim().isEmpty()) trace = null;
        if (message == null) message = type != null ? type : "failed";
        return Capture.map("type", type, "message", Bounds.head(message, Bounds.MESSAGE), "stackTrace", trace == null ? null : Bounds.head(trace, Bounds.STACK_TRACE));
    }

    static String attr(Element e, String name) {
        return e != null && e.hasAttribute(name) ? e.getAttribute(name) : null;
    }

    /** "0.021" seconds (Surefire may write "1,234.5" for long runs) in ms. */
    static long millis(String seconds) {
        try {
            return seconds == null ? 0 : Math.round(Double.parseDouble(seconds.replace(",", "")) * 1000);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    static String directText(Element e) {
        StringBuilder sb = new StringBuilder();
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n.getNodeType() == Node.TEXT_NODE || n.getNodeType() == Node.CDATA_SECTION_NODE) sb.append(n.getNodeValue());
        }
        return sb.toString();
    }

    static List<Element> children(Element e, String... names) {
        List<Element> out = new ArrayList<Element>();
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element && Arrays.asList(names).contains(((Element) n).getTagName())) out.add((Element) n);
        }
        return out;
    }

    static Element first(Element e, String... names) {
        List<Element> all = children(e, names);
        return all.isEmpty() ? null : all.get(0);
    }
}
