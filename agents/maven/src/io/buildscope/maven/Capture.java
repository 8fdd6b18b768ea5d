package io.buildscope.maven;

import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URL;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One build's capture: its events, the agent's settings, and delivery (POST, else the spool).
 * The same settings order and spool layout as every Buildscope agent (docs/send-your-builds.md).
 */
final class Capture {
    final long startedAt;
    final String buildId = Contract.newBuildId();
    private final List<Map<String, Object>> events = new ArrayList<Map<String, Object>>();
    final Properties config = new Properties();
    final File agentDir;
    /** The redaction words in effect (user, hostname, ip: agent-contract.json). */
    final List<String> redact;
    /** What the contract makes of the settings: tags, values, CI (Contract.context). */
    final Map<String, Object> context;
    final String server;
    final String accessKey;
    /** Properties given on the command line (-D), where the user's tags, values and redaction live. */
    final Properties userProperties;
    /** Literal values taken out of everything sent: -Dbuildscope.redactValues, BUILDSCOPE_REDACT_VALUES or redactValues=, and the access key. */
    final List<String> redactValues = new ArrayList<String>();
    /** Said with the build's line when agent.properties, which holds a key, is readable by others. */
    String warning;

    Capture(long startedAt, Properties userProperties) {
        this.startedAt = startedAt;
        this.userProperties = userProperties;
        String dir = System.getenv("BUILDSCOPE_AGENT_DIR");
        agentDir = dir != null && !dir.trim().isEmpty() ? new File(dir) : new File(System.getProperty("user.home"), ".buildscope");
        File file = new File(agentDir, "agent.properties");
        if (file.isFile()) {
            warning = configFileWarning(file);
            try (InputStream in = new FileInputStream(file)) {
                config.load(in);
            } catch (Exception ignored) {
                // an unreadable config file is as good as none
            }
        }
        // The settings in the contract's order: -D (the session's, then the JVM's), environment, agent.properties.
        Map<String, String> systemProperties = new LinkedHashMap<String, String>();
        for (String k : System.getProperties().stringPropertyNames()) systemProperties.put(k, System.getProperty(k));
        if (userProperties != null) for (String k : userProperties.stringPropertyNames()) systemProperties.put(k, userProperties.getProperty(k));
        Map<String, String> fromFile = new LinkedHashMap<String, String>();
        for (String k : config.stringPropertyNames()) fromFile.put(k, config.getProperty(k));
        context = Contract.context(systemProperties, System.getenv(), fromFile, agentDir);
        server = (String) context.get("server");
        accessKey = (String) context.get("accessKey");
        redact = strings(context.get("redact"));
        redactValues.addAll(strings(context.get("redactValues")));
        testOutputOn = Contract.switchedOn(Contract.setting("testOutput", Contract.sources(systemProperties, System.getenv(), fromFile)));
        consoleOutputOn = Contract.switchedOn(Contract.setting("consoleOutput", Contract.sources(systemProperties, System.getenv(), fromFile)));
    }

    /** The directory Maven ran in: compiler diagnostics name their files from it. */
    File baseDir;

    /** Whether the tests' own output is sent (the testOutput setting, on by default). */
    final boolean testOutputOn;

    /** Whether the build's console is sent (the consoleOutput setting, on by default). */
    final boolean consoleOutputOn;

    @SuppressWarnings("unchecked")
    static List<String> strings(Object list) {
        return (List<String>) list;
    }

    /** The one line every agent prints when agent.properties can be read by its group or others (src/agents/settings.ts). */
    static String configFileWarning(File file) {
        try {
            Set<java.nio.file.attribute.PosixFilePermission> perms = Files.getPosixFilePermissions(file.toPath());
            int mode = 0;
            for (java.nio.file.attribute.PosixFilePermission p : perms) mode |= 1 << (8 - p.ordinal());
            if ((mode & 0077) == 0) return null;
            return "Buildscope: " + file + " can be read by other users (mode " + String.format(Locale.ROOT, "%04o", mode) + "); it holds an access key: chmod 600 it";
        } catch (Throwable ignored) {
            return null; // no POSIX permissions here
        }
    }

    String property(String key) {
        String v = userProperties == null ? null : userProperties.getProperty(key);
        return v != null ? v : System.getProperty(key);
    }

    static String first(String... values) {
        for (String v : values) if (v != null && !v.trim().isEmpty()) return v.trim();
        return null;
    }

    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<String, Object>();
        for (int i = 0; i + 1 < kv.length; i += 2) if (kv[i + 1] != null) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    synchronized void event(String type, Map<String, Object> data, long timestamp) {
        events.add(map("timestamp", timestamp, "type", map("majorVersion", 1, "minorVersion", 0, "eventType", type), "data", data));
    }

    void event(String type, Map<String, Object> data) {
        event(type, data, System.currentTimeMillis());
    }

    /** Dependency entries the build may still list (Bounds.BUILD_DEPENDENCIES): one budget for all its projects, those of a -T build too. */
    private int dependenciesLeft = Bounds.BUILD_DEPENDENCIES;

    /** How many of `wanted` entries may be listed; the rest are counted as omitted. */
    synchronized int listableDependencies(int wanted) {
        int n = Math.max(0, Math.min(wanted, dependenciesLeft));
        dependenciesLeft -= n;
        return n;
    }

    // ---- the machine --------------------------------------------------------------------------

    static Map<String, Object> environment() {
        Runtime rt = Runtime.getRuntime();
        return map(
            "operatingSystem", System.getProperty("os.name") + " " + System.getProperty("os.version") + " (" + System.getProperty("os.arch") + ")",
            "numberOfCpuCores", rt.availableProcessors(),
            "jreVersion", System.getProperty("java.runtime.version"),
            "jvmVersion", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version") + " (" + System.getProperty("java.vm.vendor") + ")",
            "jvmCharset", Charset.defaultCharset().name(),
            "jvmLocale", Locale.getDefault().toString(),
            "jvmMaxMemoryHeapSize", rt.maxMemory());
    }

    /** BuildAgent, CI and the user's own tags and values; run beside the build (DNS can be slow). */
    List<Map<String, Object>> machineEvents() {
        List<Map<String, Object>> out = new ArrayList<Map<String, Object>>();
        String user = System.getProperty("user.name");
        String host = null;
        List<String> addresses = new ArrayList<String>();
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Throwable ignored) {
        }
        try {
            for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (!ni.isUp() || ni.isLoopback()) continue;
                for (InetAddress a : Collections.list(ni.getInetAddresses())) addresses.add(a.getHostAddress().replaceAll("%.*$", ""));
            }
        } catch (Throwable ignored) {
        }
        // Left out when the user asked (BUILDSCOPE_REDACT=user,hostname,ip or all).
        Set<String> leftOut = Contract.fieldsLeftOut(redact);
        out.add(map("type", "BuildAgent", "data", map(
            "username", leftOut.contains("username") ? null : user,
            "publicHostname", leftOut.contains("publicHostname") ? null : host,
            "localHostname", leftOut.contains("localHostname") ? null : host,
            "localIpAddresses", leftOut.contains("localIpAddresses") ? null : addresses)));
        // CI or LOCAL, the OS, the CI's provider and build, the user's own tags and values: all from
        // the contract (the CI variables themselves are never sent).
        for (String t : strings(context.get("tags"))) out.add(map("type", "UserTag", "data", map("tag", t)));
        for (Object pair : (List<?>) context.get("values")) {
            List<?> kv = (List<?>) pair;
            out.add(map("type", "UserNamedValue", "data", map("key", kv.get(0), "value", kv.get(1))));
        }
        return out;
    }

    static String run(File dir, String... command) {
        try {
            Process p = new ProcessBuilder(Arrays.asList(command)).directory(dir).redirectErrorStream(false).start();
            p.getOutputStream().close();
            String out = read(p.getInputStream());
            read(p.getErrorStream());
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroy();
                return null;
            }
            return p.exitValue() == 0 ? out.trim() : null;
        } catch (Throwable ignored) {
            return null;
        }
    }

    static String read(InputStream in) throws java.io.IOException {
        java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
        byte[] b = new byte[8192];
        for (int n; (n = in.read(b)) > 0; ) buf.write(b, 0, n);
        return new String(buf.toByteArray(), StandardCharsets.UTF_8);
    }

    List<Map<String, Object>> gitEvents(File dir) {
        List<Map<String, Object>> out = new ArrayList<Map<String, Object>>();
        if (dir == null || !"true".equals(run(dir, "git", "rev-parse", "--is-inside-work-tree"))) return out;
        String commit = run(dir, "git", "rev-parse", "HEAD");
        String branch = run(dir, "git", "rev-parse", "--abbrev-ref", "HEAD");
        // A detached checkout (as CIs make them): the branch the CI names (agent-contract.json).
        if ("HEAD".equals(branch)) branch = (String) context.get("ciBranch");
        String status = run(dir, "git", "status", "--porcelain");
        String origin = run(dir, "git", "config", "--get", "remote.origin.url");
        if (origin != null && !origin.isEmpty()) out.add(map("type", "UserNamedValue", "data", map("key", Contract.value("gitRepository"), "value", Redaction.withoutUserInfo(origin))));
        if (commit != null) out.add(map("type", "UserNamedValue", "data", map("key", Contract.value("gitCommitId"), "value", commit)));
        if (branch != null) out.add(map("type", "UserNamedValue", "data", map("key", Contract.value("gitBranch"), "value", branch)));
        if (status != null) {
            out.add(map("type", "UserNamedValue", "data", map("key", Contract.value("gitStatus"), "value", Contract.gitStatus(!status.isEmpty()))));
            if (!status.isEmpty()) out.add(map("type", "UserTag", "data", map("tag", Contract.tag("dirty"))));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    void addAll(List<Map<String, Object>> list) {
        for (Map<String, Object> e : list) event((String) e.get("type"), (Map<String, Object>) e.get("data"), startedAt);
    }

    String redactMessage(String message) {
        if (message == null) return null;
        String user = System.getProperty("user.name");
        return redact.contains("user") && user != null && !user.isEmpty() ? message.replace(user, "redacted") : message;
    }

    /**
     * The ingest line: events ordered by time (stable, so events of one instant keep their order),
     * every string of their data redacted (Redaction) before it is sent or spooled.
     */
    @SuppressWarnings("unchecked")
    synchronized String line(String toolType, String toolVersion, String agentVersion) {
        if (!Redaction.ready()) throw new IllegalStateException("the extension was built without its redaction patterns");
        List<Map<String, Object>> sorted = new ArrayList<Map<String, Object>>();
        for (Map<String, Object> e : events) {
            Map<String, Object> copy = new LinkedHashMap<String, Object>(e);
            copy.put("data", Redaction.redactAll(e.get("data"), redactValues));
            sorted.add(copy);
        }
        Collections.sort(sorted, (a, b) -> Long.compare((Long) a.get("timestamp"), (Long) b.get("timestamp")));
        return Json.write(map("buildId", buildId, "toolType", toolType, "toolVersion", toolVersion, "agentVersion", agentVersion, "events", sorted));
    }

    // ---- delivery -----------------------------------------------------------------------------

    File spoolDir() {
        return new File((String) context.get("spoolDir"));
    }

    /** Sends the build (else spools it) and prints the one line with its link. */
    void deliver(String line) {
        if (warning != null) System.out.println(warning);
        if (server == null) {
            spool(line);
            System.out.println("Buildscope: no server is configured (BUILDSCOPE_SERVER or server= in " + new File(agentDir, "agent.properties") + "); build " + buildId + " is kept in " + spoolDir());
            return;
        }
        String link = server + "/builds/" + buildId;
        String problem = post(line);
        if (problem == null) {
            System.out.println("Buildscope: " + link);
            sendSpool();
        } else if (problem.startsWith("rejected:")) {
            System.out.println("Buildscope: the server refused build " + buildId + " (" + problem.substring(9) + ")");
        } else {
            spool(line);
            System.out.println("Buildscope: " + link + " could not be sent (" + problem + "); it is kept in " + spoolDir() + " and sent with the next build or by `buildscope agent flush`");
        }
    }

    private static final Pattern STATUS = Pattern.compile("\"status\"\\s*:\\s*\"(\\w+)\"");
    private static final Pattern ERROR = Pattern.compile("\"error\"\\s*:\\s*\"([^\"]*)\"");
    private static final Pattern DETAIL = Pattern.compile("\"detail\"\\s*:\\s*\"([^\"]*)\"");

    /** null when the server took the build; "rejected:why" when it never will; else why it failed now. */
    String post(String body) {
        try {
            HttpURLConnection c = (HttpURLConnection) new URL(server + "/api/builds").openConnection();
            c.setConnectTimeout(3000);
            c.setReadTimeout(15000);
            c.setRequestMethod("POST");
            c.setDoOutput(true);
            c.setRequestProperty("Content-Type", "application/x-ndjson");
            if (accessKey != null) c.setRequestProperty("Authorization", "Bearer " + accessKey);
            byte[] bytes = (body.trim() + "\n").getBytes(StandardCharsets.UTF_8);
            c.setFixedLengthStreamingMode(bytes.length);
            try (OutputStream out = c.getOutputStream()) {
                out.write(bytes);
            }
            int code = c.getResponseCode();
            if (code != 200) {
                String detail = "";
                try {
                    if (c.getErrorStream() != null) detail = read(c.getErrorStream());
                } catch (Throwable ignored) {
                }
                Matcher m = DETAIL.matcher(detail);
                return "HTTP " + code + (m.find() ? ": " + m.group(1) : "");
            }
            String answer = read(c.getInputStream());
            Matcher m = STATUS.matcher(answer);
            if (!m.find()) return "the server answered no result";
            if ("rejected".equals(m.group(1))) {
                Matcher e = ERROR.matcher(answer);
                return "rejected:" + (e.find() ? e.group(1) : "rejected");
            }
            return null;
        } catch (Throwable t) {
            return t.getClass().getSimpleName() + ": " + t.getMessage();
        }
    }

    /** A directory only its owner may enter (0700), made if missing and tightened if not: spooled builds are no business of other users. */
    static void privateDir(File dir) throws java.io.IOException {
        dir.mkdirs();
        try {
            Files.setPosixFilePermissions(dir.toPath(), java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        } catch (UnsupportedOperationException | java.io.IOException ignored) {
            // no POSIX permissions on this file system, or a shared spool that is not ours to change
        }
    }

    void spool(String line) {
        try {
            File dir = spoolDir();
            privateDir(dir);
            File tmp = new File(dir, buildId + ".ndjson.tmp");
            Files.deleteIfExists(tmp.toPath());
            try {
                // Created 0600 (not chmod-ed after): the build is never readable by others, not even for a moment.
                Files.createFile(tmp.toPath(), java.nio.file.attribute.PosixFilePermissions.asFileAttribute(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
            } catch (UnsupportedOperationException ignored) {
                // no POSIX permissions on this file system
            }
            Files.write(tmp.toPath(), (line + "\n").getBytes(StandardCharsets.UTF_8));
            Files.move(tmp.toPath(), new File(dir, buildId + ".ndjson").toPath(), StandardCopyOption.ATOMIC_MOVE);
        } catch (Throwable t) {
            System.out.println("Buildscope: build " + buildId + " could not be spooled either (" + t.getMessage() + ")");
        }
    }

    /** Sends what earlier builds spooled; a file is claimed by a rename, so two senders never post it twice. */
    void sendSpool() {
        try {
            File dir = spoolDir();
            File[] files = dir.listFiles((d, name) -> Contract.isSpooledBuild(name));
            if (files == null || files.length == 0) return;
            Arrays.sort(files);
            int sent = 0;
            for (int i = 0; i < files.length && i < 50; i++) {
                File f = files[i];
                File claimed = new File(dir, f.getName() + ".sending." + buildId);
                try {
                    Files.move(f.toPath(), claimed.toPath(), StandardCopyOption.ATOMIC_MOVE);
                } catch (Throwable ignored) {
                    continue;
                }
                String problem = post(new String(Files.readAllBytes(claimed.toPath()), StandardCharsets.UTF_8));
                if (problem == null) {
                    Files.delete(claimed.toPath());
                    sent++;
                } else if (problem.startsWith("rejected:")) {
                    File rejected = new File(dir, "rejected");
                    privateDir(rejected);
                    Files.move(claimed.toPath(), new File(rejected, f.getName()).toPath(), StandardCopyOption.REPLACE_EXISTING);
                } else {
                    Files.move(claimed.toPath(), f.toPath(), StandardCopyOption.ATOMIC_MOVE);
                    break;
                }
            }
            if (sent > 0) System.out.println("Buildscope: " + sent + " spooled build" + (sent == 1 ? "" : "s") + " sent");
        } catch (Throwable t) {
            System.out.println("Buildscope: the spool could not be sent (" + t.getMessage() + ")");
        }
    }
}
