package io.buildscope.maven;

import java.io.DataInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Java reader of agents/agent-contract.json, which is written into this source when the
 * extension is built (src/agents/agent-sources.ts): the build ID, the settings and their order,
 * the redaction words, CI detection and the tag and value names, by the same rules as
 * src/agents/contract.ts. Public, so that the conformance table can be run through it
 * (test/agents/fixtures/jvm/ConformanceCases.java).
 */
public final class Contract {
    static final Map<String, Object> CONTRACT = /*@AGENT_CONTRACT@*/ null;

    private Contract() {
    }

    static Map<String, Object> m(Object... kv) {
        Map<String, Object> out = new LinkedHashMap<String, Object>();
        for (int i = 0; i + 1 < kv.length; i += 2) out.put((String) kv[i], kv[i + 1]);
        return out;
    }

    static List<Object> l(Object... items) {
        return Arrays.asList(items);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object parent, String key) {
        return (Map<String, Object>) ((Map<String, Object>) parent).get(key);
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object parent, String key) {
        return (List<Object>) ((Map<String, Object>) parent).get(key);
    }

    static String string(Object parent, String key) {
        return (String) ((Map<?, ?>) parent).get(key);
    }

    /** A tag name of the contract (ci, local, dirty). */
    public static String tag(String name) {
        return string(map(CONTRACT, "tags"), name);
    }

    /** A value name of the contract (ciProvider, gitBranch, ...). */
    public static String value(String name) {
        return string(map(CONTRACT, "values"), name);
    }

    public static String gitStatus(boolean dirty) {
        return string(map(CONTRACT, "gitStatus"), dirty ? "dirty" : "clean");
    }

    static String trimmed(String v) {
        if (v == null) return null;
        String t = v.trim();
        return t.isEmpty() ? null : t;
    }

    /** A fresh build ID by the contract. /dev/urandom where there is one: a cold SecureRandom can take seconds to start. */
    public static String newBuildId() {
        Map<String, Object> spec = map(CONTRACT, "buildId");
        String alphabet = string(spec, "alphabet");
        int length = ((Number) spec.get("length")).intValue();
        int limit = 256 - 256 % alphabet.length(); // bytes at or above it would favour some characters
        StringBuilder sb = new StringBuilder();
        byte[] bytes = new byte[length * 2];
        SecureRandom fallback = null;
        while (sb.length() < length) {
            boolean read = false;
            File urandom = new File("/dev/urandom");
            if (urandom.exists()) {
                try (DataInputStream in = new DataInputStream(new FileInputStream(urandom))) {
                    in.readFully(bytes);
                    read = true;
                } catch (Throwable ignored) {
                }
            }
            if (!read) {
                if (fallback == null) fallback = new SecureRandom();
                fallback.nextBytes(bytes);
            }
            for (byte b : bytes) if ((b & 0xff) < limit && sb.length() < length) sb.append(alphabet.charAt((b & 0xff) % alphabet.length()));
        }
        return sb.toString();
    }

    /** Whether `id` is a build ID by the contract: its length, of its alphabet's characters only. */
    public static boolean isBuildId(String id) {
        Map<String, Object> spec = map(CONTRACT, "buildId");
        String alphabet = string(spec, "alphabet");
        if (id == null || id.length() != ((Number) spec.get("length")).intValue()) return false;
        for (int i = 0; i < id.length(); i++) if (alphabet.indexOf(id.charAt(i)) < 0) return false;
        return true;
    }

    /** Whether a spool directory's file is a spooled build: `{build ID}.ndjson`. */
    public static boolean isSpooledBuild(String name) {
        return name != null && name.endsWith(".ndjson") && isBuildId(name.substring(0, name.length() - ".ndjson".length()));
    }

    /** The sources of a setting, by the contract's names: systemProperty, environment, file. */
    static Map<String, Map<String, String>> sources(Map<String, String> systemProperties, Map<String, String> environment, Map<String, String> file) {
        Map<String, Map<String, String>> out = new LinkedHashMap<String, Map<String, String>>();
        out.put("systemProperty", systemProperties);
        out.put("environment", environment);
        out.put("file", file);
        return out;
    }

    /** The first source, in the contract's order, that sets the key. */
    static String setting(String name, Map<String, Map<String, String>> sources) {
        Map<String, Object> settings = map(CONTRACT, "settings");
        Map<String, Object> key = map(map(settings, "keys"), name);
        for (Object source : list(settings, "order")) {
            String k = string(key, (String) source);
            String v = k == null ? null : trimmed(sources.get(source).get(k));
            if (v != null) return v;
        }
        return null;
    }

    /** A capture switch (testOutput, consoleOutput): on unless set to one of the contract's off words. */
    static boolean switchedOn(String value) {
        if (value == null) return true;
        return !list(map(CONTRACT, "settings").get("switches"), "off").contains(value.toLowerCase(Locale.ROOT));
    }

    static List<String> listOf(String text) {
        List<String> out = new ArrayList<String>();
        if (text != null) for (String s : text.split(",")) if (!s.trim().isEmpty()) out.add(s.trim());
        return out;
    }

    /** The user's named values, merged key by key (the first source in the contract's order wins), sorted by key. */
    static Map<String, String> values(Map<String, Map<String, String>> sources) {
        Map<String, Object> settings = map(CONTRACT, "settings");
        Map<String, Object> key = map(map(settings, "keys"), "values");
        List<Object> order = new ArrayList<Object>(list(settings, "order"));
        Collections.reverse(order);
        Map<String, String> merged = new TreeMap<String, String>();
        for (Object source : order) {
            Map<String, String> from = sources.get(source);
            if ("environment".equals(source)) {
                String text = from.get(string(key, "environment"));
                if (text == null) continue;
                for (String pair : text.split(";")) {
                    int eq = pair.indexOf('=');
                    if (eq > 0 && !pair.substring(0, eq).trim().isEmpty()) merged.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
                }
            } else {
                String prefix = string(key, "file".equals(source) ? "filePrefix" : "systemPropertyPrefix");
                for (Map.Entry<String, String> e : from.entrySet()) {
                    if (e.getKey().startsWith(prefix) && e.getKey().length() > prefix.length() && e.getValue() != null) merged.put(e.getKey().substring(prefix.length()), e.getValue().trim());
                }
            }
        }
        return merged;
    }

    /** The redaction words in effect, canonical, in the contract's order; aliases and any case accepted. */
    static List<String> redactedWords(Map<String, Map<String, String>> sources) {
        Map<String, Object> redaction = map(CONTRACT, "redaction");
        String text = setting("redact", sources);
        Set<String> given = new HashSet<String>();
        if (text != null) for (String w : text.toLowerCase(Locale.ROOT).split("[\\s,]+")) if (!w.isEmpty()) given.add(w);
        List<String> out = new ArrayList<String>();
        for (Object w : list(redaction, "words")) {
            boolean on = given.contains(string(redaction, "all")) || given.contains(string(w, "word").toLowerCase(Locale.ROOT));
            for (Object alias : list(w, "aliases")) on = on || given.contains(((String) alias).toLowerCase(Locale.ROOT));
            if (on) out.add(string(w, "word"));
        }
        return out;
    }

    /** The BuildAgent fields the words leave out. */
    public static Set<String> fieldsLeftOut(List<String> words) {
        Set<String> out = new HashSet<String>();
        for (Object w : list(map(CONTRACT, "redaction"), "words")) {
            if (words.contains(string(w, "word"))) for (Object f : list(w, "leavesOut")) out.add((String) f);
        }
        return out;
    }

    static boolean isSet(Map<String, String> env, Object detect) {
        String v = trimmed(env.get(string(detect, "variable")));
        if (v == null) return false;
        String equals = string(detect, "equals");
        return equals != null ? v.equals(equals) : !v.equalsIgnoreCase("false");
    }

    private static final Pattern VARIABLE = Pattern.compile("\\{([A-Z0-9_]+)\\}");

    static String fill(String template, Map<String, String> env) {
        Matcher m = VARIABLE.matcher(template);
        StringBuffer sb = new StringBuffer();
        while (m.find()) {
            String v = trimmed(env.get(m.group(1)));
            if (v == null) return null;
            m.appendReplacement(sb, Matcher.quoteReplacement(v));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /** {provider, buildUrl, branch} (each when known) of the CI the build runs on, or null; the variables are never sent. */
    public static Map<String, String> detectCi(Map<String, String> env) {
        Map<String, Object> ci = map(CONTRACT, "ci");
        for (Object p : list(ci, "providers")) {
            boolean found = false;
            for (Object d : list(p, "detect")) found = found || isSet(env, d);
            if (!found) continue;
            Map<String, String> out = new LinkedHashMap<String, String>();
            out.put("provider", string(p, "name"));
            for (Object t : list(p, "buildUrl")) {
                String url = fill((String) t, env);
                if (url != null) {
                    out.put("buildUrl", url);
                    break;
                }
            }
            for (Object v : list(p, "branch")) {
                String b = trimmed(env.get((String) v));
                if (b != null) {
                    out.put("branch", b);
                    break;
                }
            }
            return out;
        }
        for (Object d : list(map(ci, "generic"), "detect")) if (isSet(env, d)) return new LinkedHashMap<String, String>();
        return null;
    }

    /** The operating system's tag, by the Node and Python platform names the contract uses. */
    public static String osTag(String osName) {
        String n = osName == null ? "" : osName.toLowerCase(Locale.ROOT);
        String platform = n.startsWith("windows") ? "win32" : n.startsWith("mac") ? "darwin" : n.startsWith("linux") ? "linux" : osName;
        String tag = string(map(CONTRACT, "operatingSystemTags"), platform);
        return tag != null ? tag : osName;
    }

    /**
     * Everything the contract decides from the settings alone (src/agents/contract.ts agentContext):
     * server, accessKey, spoolDir, redact, redactValues, tags (CI or LOCAL, the OS, the user's),
     * values (CI provider and build, the user's; as [key, value] pairs), ciBranch.
     */
    public static Map<String, Object> context(Map<String, String> systemProperties, Map<String, String> environment, Map<String, String> file, File agentDir) {
        Map<String, Map<String, String>> sources = sources(systemProperties, environment, file);
        String accessKey = setting("accessKey", sources);
        Map<String, String> ci = detectCi(environment);
        List<Object> values = new ArrayList<Object>();
        if (ci != null && ci.get("provider") != null) values.add(Arrays.asList(value("ciProvider"), ci.get("provider")));
        if (ci != null && ci.get("buildUrl") != null) values.add(Arrays.asList(value("ciBuild"), ci.get("buildUrl")));
        for (Map.Entry<String, String> e : values(sources).entrySet()) values.add(Arrays.asList(e.getKey(), e.getValue()));
        List<String> tags = new ArrayList<String>();
        tags.add(tag(ci != null ? "ci" : "local"));
        tags.add(osTag(System.getProperty("os.name")));
        tags.addAll(listOf(setting("tags", sources)));
        List<String> redactValues = listOf(setting("redactValues", sources));
        if (accessKey != null) redactValues.add(accessKey);
        String server = setting("server", sources);
        String spoolDir = setting("spoolDir", sources);
        Map<String, Object> out = new LinkedHashMap<String, Object>();
        out.put("server", server == null ? null : server.replaceAll("/+$", ""));
        out.put("accessKey", accessKey);
        out.put("spoolDir", spoolDir != null ? spoolDir : new File(agentDir, "spool").getPath());
        out.put("redact", redactedWords(sources));
        out.put("redactValues", redactValues);
        out.put("tags", tags);
        out.put("values", values);
        out.put("ciBranch", ci == null ? null : ci.get("branch"));
        return out;
    }

    /** The context as JSON, for the conformance harness. */
    public static String contextJson(Map<String, String> systemProperties, Map<String, String> environment, Map<String, String> file, File agentDir) {
        return Json.write(context(systemProperties, environment, file, agentDir));
    }
}
