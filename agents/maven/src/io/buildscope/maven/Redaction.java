package io.buildscope.maven;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Secrets out of what the extension sends: git remotes without their user info, and every string
 * of the build passed through the patterns every Buildscope agent shares
 * (agents/redaction-patterns.json, written into this source when the extension is built:
 * src/agents/maven.ts) and the values the user lists. Public, so that the rules can be run on
 * their own against the shared test tables (test/agents/maven.test.ts).
 */
public final class Redaction {
    /** {regex, "i" when case-insensitive}, in the file's order. */
    private static final String[][] RULES = {/*@REDACTION_PATTERNS@*/};
    private static final String MASK = "@REDACTION_MASK@";
    private static final List<Pattern> PATTERNS = new ArrayList<Pattern>();

    static {
        for (String[] r : RULES) PATTERNS.add(Pattern.compile(r[0], "i".equals(r[1]) ? Pattern.CASE_INSENSITIVE : 0));
    }

    private Redaction() {
    }

    /** Whether the patterns were written in (a source built without them sends nothing). */
    public static boolean ready() {
        return !PATTERNS.isEmpty() && !MASK.startsWith("@");
    }

    private static final Pattern URL = Pattern.compile("^([A-Za-z][A-Za-z0-9+.-]*://)(.*)$", Pattern.DOTALL);
    private static final Pattern SCP = Pattern.compile("^(.*)@([^@/:\\[\\]]+|\\[[^\\]]*\\]):(.*)$", Pattern.DOTALL);
    private static final Pattern HOST_PORT = Pattern.compile("^(\\[[0-9A-Fa-f:.]*\\]|[^:@\\[\\]]*)(:[0-9]*)?$");

    /**
     * A git remote without credentials, by the rule of src/agents/common-env.ts withoutUserInfo:
     * URL-style remotes lose everything before the last '@' of the authority (taken by hand:
     * java.net.URI refuses a raw '@' in a password and splits early at a raw '/'); scp-like remotes
     * keep their user and lose a password.
     */
    public static String withoutUserInfo(String remote) {
        Matcher url = URL.matcher(remote);
        if (!url.matches()) {
            Matcher scp = SCP.matcher(remote);
            if (!scp.matches() || scp.group(1).indexOf(':') < 0) return remote;
            return scp.group(1).substring(0, scp.group(1).indexOf(':')) + "@" + scp.group(2) + ":" + scp.group(3);
        }
        String scheme = url.group(1);
        String rest = url.group(2);
        int firstAt = rest.indexOf('@');
        if (firstAt < 0) return remote;
        int slash = rest.indexOf('/');
        int authorityEnd = slash < 0 ? rest.length() : slash;
        if (firstAt > authorityEnd && HOST_PORT.matcher(rest.substring(0, authorityEnd)).matches()) return remote; // an '@' of the path
        int segmentEnd = rest.indexOf('/', firstAt);
        int lastAt = rest.lastIndexOf('@', segmentEnd < 0 ? rest.length() : segmentEnd);
        return scheme + rest.substring(lastAt + 1);
    }

    /** Every match replaced by the part the pattern keeps (group 1) and the mask; then the listed values. */
    public static String redact(String text, List<String> literals) {
        if (text == null) return null;
        String out = text;
        for (Pattern p : PATTERNS) {
            Matcher m = p.matcher(out);
            if (!m.find()) continue;
            StringBuffer sb = new StringBuffer();
            do {
                String kept = m.groupCount() >= 1 ? m.group(1) : null;
                m.appendReplacement(sb, Matcher.quoteReplacement((kept == null ? "" : kept) + MASK));
            } while (m.find());
            m.appendTail(sb);
            out = sb.toString();
        }
        if (literals != null) for (String v : literals) if (v != null && !v.isEmpty()) out = out.replace(v, MASK);
        return out;
    }

    /** Every string inside maps and lists, redacted (a copy). */
    @SuppressWarnings("unchecked")
    public static Object redactAll(Object value, List<String> literals) {
        if (value instanceof String) return redact((String) value, literals);
        if (value instanceof Map) {
            Map<String, Object> out = new LinkedHashMap<String, Object>();
            for (Map.Entry<String, Object> e : ((Map<String, Object>) value).entrySet()) out.put(e.getKey(), redactAll(e.getValue(), literals));
            return out;
        }
        if (value instanceof List) {
            List<Object> out = new ArrayList<Object>();
            for (Object o : (List<Object>) value) out.add(redactAll(o, literals));
            return out;
        }
        return value;
    }
}
