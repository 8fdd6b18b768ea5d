package io.buildscope.maven;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.inject.Named;
import javax.inject.Singleton;
import org.apache.maven.artifact.Artifact;
import org.apache.maven.eventspy.AbstractEventSpy;
import org.apache.maven.execution.ExecutionEvent;
import org.apache.maven.execution.MavenExecutionRequest;
import org.apache.maven.execution.MavenExecutionResult;
import org.apache.maven.execution.MavenSession;
import org.apache.maven.plugin.MojoExecution;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.project.MavenProject;
import org.apache.maven.rtinfo.RuntimeInformation;

/**
 * Buildscope's Maven core extension: an EventSpy that records the build and sends it when Maven
 * ends. Loaded from ${maven.home}/lib/ext or -Dmaven.ext.class.path (see `buildscope agent maven`).
 * Nothing here may fail or hold up the build: every callback is guarded, and the slow parts
 * (host names, git) run beside the build.
 */
@Named("buildscope")
@Singleton
public class BuildscopeEventSpy extends AbstractEventSpy {
    static final String VERSION = "@AGENT_VERSION@";

    private final RuntimeInformation runtime;
    private volatile Capture capture;
    private final Map<String, Integer> mojoIds = new ConcurrentHashMap<String, Integer>();
    private final AtomicInteger nextId = new AtomicInteger(1);
    /** When each mojo execution started: its test reports are the ones written since. */
    private final Map<String, Long> mojoStarts = new ConcurrentHashMap<String, Long>();
    private final AtomicInteger nextTestId = new AtomicInteger(1);
    private final List<Map<String, Object>> failures = new ArrayList<Map<String, Object>>();
    private final ExecutorService background = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "buildscope-agent");
        t.setDaemon(true);
        return t;
    });
    private Future<List<Map<String, Object>>> machine;
    private Future<List<Map<String, Object>>> git;
    private volatile boolean finished;
    /** The console kept since the build started, or null (consoleOutput off). */
    private volatile ConsoleCapture console;
    // The spy's own time, printed with -Dbuildscope.timing=true (what bench/agent-overhead.ts reads).
    private final java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong mojoNanos = new java.util.concurrent.atomic.AtomicLong();
    private final AtomicInteger mojoCalls = new AtomicInteger();
    private long sendNanos;

    @javax.inject.Inject
    public BuildscopeEventSpy(RuntimeInformation runtime) {
        this.runtime = runtime;
    }

    @Override
    public void onEvent(Object event) {
        long t0 = System.nanoTime();
        boolean mojo = false;
        try {
            if (event instanceof MavenExecutionRequest) started((MavenExecutionRequest) event);
            else if (event instanceof ExecutionEvent) mojo = execution((ExecutionEvent) event);
            else if (event instanceof MavenExecutionResult) finish((MavenExecutionResult) event);
        } catch (Throwable t) {
            // never the build's problem
        }
        long spent = System.nanoTime() - t0;
        nanos.addAndGet(spent);
        if (mojo) {
            mojoNanos.addAndGet(spent);
            mojoCalls.incrementAndGet();
        }
        if (event instanceof MavenExecutionResult && "true".equals(capture != null ? capture.property("buildscope.timing") : null)) {
            System.out.println(String.format(java.util.Locale.ROOT, "Buildscope: agent time %.1f ms (%d mojo callbacks %.1f, sending %.1f)", nanos.get() / 1e6, mojoCalls.get(), mojoNanos.get() / 1e6, sendNanos / 1e6));
        }
    }

    @Override
    public void close() {
        try {
            finish(null);
        } catch (Throwable ignored) {
        }
        background.shutdownNow();
    }

    private void started(MavenExecutionRequest request) {
        long start = request.getStartTime() != null ? request.getStartTime().getTime() : System.currentTimeMillis();
        Properties user = request.getUserProperties();
        Capture c = new Capture(start, user);
        capture = c;
        if (c.consoleOutputOn) console = ConsoleCapture.install(Bounds.CONSOLE);
        c.event("BuildStarted", Capture.map(), start);
        c.event("BuildRequestedTasks", Capture.map("requested", new ArrayList<String>(request.getGoals()), "excluded", excludedProjects(request)));
        c.event("Environment", Capture.environment());
        c.event("BuildOptions", options(request));
        machine = background.submit(c::machineEvents);
        File base = request.getBaseDirectory() != null ? new File(request.getBaseDirectory()) : null;
        c.baseDir = base;
        git = background.submit(() -> c.gitEvents(base));
    }

    @SuppressWarnings("unchecked")
    private static List<String> excludedProjects(MavenExecutionRequest request) {
        try {
            Object v = MavenExecutionRequest.class.getMethod("getExcludedProjects").invoke(request);
            if (v instanceof List) return new ArrayList<String>((List<String>) v);
        } catch (Throwable ignored) {
        }
        return new ArrayList<String>();
    }

    private static Object call(Object target, String method) {
        try {
            return target.getClass().getMethod(method).invoke(target);
        } catch (Throwable ignored) {
            return null;
        }
    }

    private static Map<String, Object> options(MavenExecutionRequest r) {
        String failMode = r.getReactorFailureBehavior();
        String checksums = r.getGlobalChecksumPolicy();
        return Capture.map(
            "offlineModeEnabled", r.isOffline(),
            "batchModeEnabled", !r.isInteractiveMode(),
            "failFastEnabled", MavenExecutionRequest.REACTOR_FAIL_FAST.equals(failMode),
            "failAtEndEnabled", MavenExecutionRequest.REACTOR_FAIL_AT_END.equals(failMode),
            "failNeverEnabled", MavenExecutionRequest.REACTOR_FAIL_NEVER.equals(failMode),
            "maxNumberOfThreads", r.getDegreeOfConcurrency(),
            "quietEnabled", r.getLoggingLevel() == MavenExecutionRequest.LOGGING_LEVEL_ERROR,
            "debugEnabled", r.getLoggingLevel() == MavenExecutionRequest.LOGGING_LEVEL_DEBUG,
            "errorsEnabled", r.isShowErrors(),
            "nonRecursiveEnabled", !r.isRecursive(),
            "updateSnapshotsEnabled", r.isUpdateSnapshots(),
            "noSnapshotUpdatesEnabled", call(r, "isNoSnapshotUpdates"),
            "strictChecksumsEnabled", MavenExecutionRequest.CHECKSUM_POLICY_FAIL.equals(checksums),
            "laxChecksumsEnabled", MavenExecutionRequest.CHECKSUM_POLICY_WARN.equals(checksums));
    }

    private static String path(ExecutionEvent e) {
        MojoExecution m = e.getMojoExecution();
        MavenProject p = e.getProject();
        return (p != null ? p.getArtifactId() : "") + ":" + m.getArtifactId() + ":" + m.getGoal() + "@" + m.getExecutionId();
    }

    /** Records an execution event; true when it was one of a mojo. */
    private boolean execution(ExecutionEvent e) {
        Capture c = capture;
        if (c == null) return false;
        switch (e.getType()) {
            case SessionStarted: {
                MavenSession session = e.getSession();
                MavenProject top = session.getTopLevelProject();
                if (top != null) c.event("ProjectStructure", Capture.map("rootProjectName", top.getName() != null ? top.getName() : top.getArtifactId()));
                return false;
            }
            case MojoStarted: {
                int id = nextId.getAndIncrement();
                String path = path(e);
                mojoIds.put(path, id);
                mojoStarts.put(path, System.currentTimeMillis());
                c.event("TaskStarted", Capture.map("id", id, "path", path));
                return true;
            }
            case MojoSucceeded:
                mojoFinished(c, e, "success");
                tests(c, e);
                return true;
            case MojoSkipped:
                mojoFinished(c, e, "skipped");
                return true;
            case MojoFailed: {
                mojoFinished(c, e, "failed");
                tests(c, e);
                Throwable t = e.getException();
                // Maven wraps the mojo's own exception in one that repeats its message: the mojo's says it once.
                Throwable own = mojoException(t);
                synchronized (failures) {
                    failures.add(Capture.map("classification", isVerification(e.getMojoExecution(), t) ? "verification" : "non-verification",
                        "message", c.redactMessage("Mojo " + path(e) + " failed: " + messageOf(own)), "cause", causeOf(c, own)));
                }
                return true;
            }
            case ProjectSucceeded:
            case ProjectFailed:
                dependencies(c, e.getProject());
                return false;
            default:
                return false;
        }
    }

    /** Maven's scopes, in the order their events are made; a scope Maven does not define comes after them, by name. */
    private static final List<String> SCOPES = java.util.Arrays.asList("compile", "provided", "runtime", "test", "system");

    private static int scopeRank(String scope) {
        int i = SCOPES.indexOf(scope);
        return i >= 0 ? i : SCOPES.size();
    }

    /** An artifact as ResolvedDependencies lists it: groupId:artifactId[:classifier]:version, the version always last. */
    static String coordinates(Artifact a) {
        String classifier = a.getClassifier();
        // getVersion, not getBaseVersion: a snapshot as the timestamped one its repository gave, so that a newer snapshot shows as resolved differently.
        return a.getGroupId() + ":" + a.getArtifactId() + (classifier != null && !classifier.isEmpty() ? ":" + classifier : "") + ":" + a.getVersion();
    }

    /**
     * One ResolvedDependencies event per scope of what the project's mojos had resolved (transitive,
     * each with its scope). Only read: Maven resolved them for the mojos that asked, and a project
     * none of whose mojos asked has none and sends nothing.
     */
    private void dependencies(Capture c, MavenProject project) {
        if (project == null) return;
        java.util.Set<Artifact> artifacts = project.getArtifacts();
        if (artifacts == null || artifacts.isEmpty()) return;
        Map<String, java.util.TreeSet<String>> byScope = new java.util.TreeMap<String, java.util.TreeSet<String>>((x, y) -> {
            int byRank = Integer.compare(scopeRank(x), scopeRank(y));
            return byRank != 0 ? byRank : x.compareTo(y);
        });
        for (Artifact a : artifacts) {
            // No scope is Maven's default scope.
            String scope = a.getScope() != null && !a.getScope().trim().isEmpty() ? a.getScope().trim() : "compile";
            byScope.computeIfAbsent(scope, k -> new java.util.TreeSet<String>()).add(coordinates(a));
        }
        String name = project.getGroupId() + ":" + project.getArtifactId();
        long at = System.currentTimeMillis();
        for (Map.Entry<String, java.util.TreeSet<String>> scope : byScope.entrySet()) {
            List<String> all = new ArrayList<String>(scope.getValue());
            int listed = c.listableDependencies(all.size());
            Map<String, Object> data = Capture.map("project", name, "configuration", scope.getKey(), "dependencies", new ArrayList<String>(all.subList(0, listed)));
            if (listed < all.size()) data.put("omitted", all.size() - listed);
            c.event("ResolvedDependencies", data, at);
        }
    }

    private void mojoFinished(Capture c, ExecutionEvent e, String outcome) {
        String path = path(e);
        Integer id = mojoIds.get(path);
        if (id == null) {
            id = nextId.getAndIncrement();
            c.event("TaskStarted", Capture.map("id", id, "path", path));
        }
        // Maven has no build cache of its own: no mojo execution is cacheable.
        c.event("TaskFinished", Capture.map("id", id, "path", path, "outcome", outcome, "cacheable", false));
    }

    /** The Surefire and Failsafe executions whose XML reports hold the tests they ran. */
    static String reportsDefault(MojoExecution m) {
        String plugin = m.getArtifactId();
        if ("maven-surefire-plugin".equals(plugin) && "test".equals(m.getGoal())) return "surefire-reports";
        if ("maven-failsafe-plugin".equals(plugin) && "integration-test".equals(m.getGoal())) return "failsafe-reports";
        return null;
    }

    /** The execution's reportsDirectory: its configured value when it only names the project's directories, else the plugin's default. */
    static File reportsDirectory(MojoExecution m, MavenProject project, String fallback) {
        String target = project.getBuild() != null ? project.getBuild().getDirectory() : new File(project.getBasedir(), "target").getPath();
        try {
            String v = m.getConfiguration().getChild("reportsDirectory").getValue();
            if (v != null && !v.trim().isEmpty()) {
                v = v.trim().replace("${project.build.directory}", target).replace("${project.basedir}", project.getBasedir().getPath()).replace("${basedir}", project.getBasedir().getPath());
                if (!v.contains("${")) {
                    File f = new File(v);
                    return f.isAbsolute() ? f : new File(project.getBasedir(), v);
                }
            }
        } catch (Throwable ignored) {
        }
        return new File(target, fallback);
    }

    /** Records the tests of a Surefire or Failsafe execution that just ended, from the reports it wrote. */
    private void tests(Capture c, ExecutionEvent e) {
        MojoExecution m = e.getMojoExecution();
        String fallback = reportsDefault(m);
        if (fallback == null || e.getProject() == null) return;
        String task = path(e);
        Long since = mojoStarts.get(task);
        long start = since != null ? since : System.currentTimeMillis();
        long now = System.currentTimeMillis();
        for (File report : TestReports.reports(reportsDirectory(m, e.getProject(), fallback), start)) {
            try {
                long at = start;
                for (TestReports.Attempt a : TestReports.read(report, task, Bounds.TEST_OUTPUT, c.testOutputOn)) {
                    int id = nextTestId.getAndIncrement();
                    // Laid out one after the other from the execution's start: a report gives durations, not start times.
                    long begin = Math.min(start + a.offset, now);
                    long end = Math.min(begin + a.duration, now);
                    at = end;
                    a.started.put("id", id);
                    a.finished.put("id", id);
                    Map<String, Object> startedData = Capture.map("id", id);
                    startedData.putAll(a.started);
                    Map<String, Object> finishedData = Capture.map("id", id);
                    finishedData.putAll(a.finished);
                    c.event("TestStarted", startedData, begin);
                    for (Map<String, Object> o : a.output) {
                        Map<String, Object> out = Capture.map("id", id);
                        out.putAll(o);
                        c.event("TestOutput", out, end);
                    }
                    c.event("TestFinished", finishedData, end);
                }
                start = Math.max(start, at);
            } catch (Throwable ignored) {
                // an unreadable report costs its tests, never the build
            }
        }
    }

    /** The first exception of the chain a mojo threw itself (MojoExecutionException, MojoFailureException), else the given one. */
    static Throwable mojoException(Throwable t) {
        for (Throwable x = t; x != null; x = x.getCause() == x ? null : x.getCause()) {
            if (x instanceof org.apache.maven.plugin.AbstractMojoExecutionException) return x;
        }
        return t;
    }

    /** javac's errors as the compiler plugin words them: `/path/File.java:[line,column] message`. */
    private static final java.util.regex.Pattern COMPILER_ERROR = java.util.regex.Pattern.compile("^(?:\\[(ERROR|WARNING)\\] )?(.+\\.(?:java|kt|groovy|scala)):\\[(\\d+),(\\d+)\\] (.*)$", java.util.regex.Pattern.MULTILINE);

    static List<Map<String, Object>> diagnostics(String text, File base) {
        List<Map<String, Object>> out = new ArrayList<Map<String, Object>>();
        if (text == null) return out;
        java.util.regex.Matcher m = COMPILER_ERROR.matcher(text);
        java.util.Set<String> seen = new java.util.HashSet<String>();
        while (m.find() && out.size() < 100) {
            String file = m.group(2).trim();
            String root = base != null ? base.getPath() + File.separator : null;
            if (root != null && file.startsWith(root)) file = file.substring(root.length());
            String message = m.group(5).trim();
            // The plugin says each error twice (the mojo's message and its long message): once here.
            if (!seen.add(file + ":" + m.group(3) + ":" + m.group(4) + ":" + message)) continue;
            out.add(Capture.map("file", file, "line", Integer.parseInt(m.group(3)), "column", Integer.parseInt(m.group(4)),
                "severity", "WARNING".equals(m.group(1)) ? "warning" : "error", "message", Bounds.head(message, Bounds.MESSAGE)));
        }
        return out;
    }

    /** A failed mojo's cause: its exception's type, message and stack trace, and a compiler's errors. */
    private Map<String, Object> causeOf(Capture c, Throwable t) {
        if (t == null) return null;
        java.io.StringWriter trace = new java.io.StringWriter();
        t.printStackTrace(new java.io.PrintWriter(trace));
        Map<String, Object> cause = Capture.map("type", t.getClass().getName(), "message", Bounds.head(c.redactMessage(messageOf(t)), Bounds.MESSAGE),
            "stackTrace", Bounds.head(c.redactMessage(trace.toString()), Bounds.STACK_TRACE));
        String text = t.getMessage();
        if (t instanceof org.apache.maven.plugin.AbstractMojoExecutionException) text = text + "\n" + ((org.apache.maven.plugin.AbstractMojoExecutionException) t).getLongMessage();
        List<Map<String, Object>> found = diagnostics(text, c.baseDir);
        if (!found.isEmpty()) cause.put("diagnostics", found);
        return cause;
    }

    /** Test and check failures: a MojoFailureException (not an error) of a test or check goal or phase. */
    static boolean isVerification(MojoExecution m, Throwable t) {
        boolean failure = false;
        for (Throwable x = t; x != null; x = x.getCause() == x ? null : x.getCause()) if (x instanceof MojoFailureException) failure = true;
        if (!failure || m == null) return false;
        String goal = m.getGoal();
        String phase = m.getLifecyclePhase();
        return "test".equals(goal) || "integration-test".equals(goal) || "verify".equals(goal) || "check".equals(goal)
            || "test".equals(phase) || "integration-test".equals(phase) || "verify".equals(phase);
    }

    static String messageOf(Throwable t) {
        List<String> parts = new ArrayList<String>();
        for (Throwable x = t; x != null && parts.size() < 4; x = x.getCause() == x ? null : x.getCause()) {
            String m = x.getMessage();
            if (m == null || m.trim().isEmpty()) continue;
            String said = m.trim();
            // A message that repeats (or is repeated by) one already taken says nothing new.
            if (parts.stream().anyMatch(p -> p.contains(said) || said.contains(p))) continue;
            parts.add(said);
        }
        return parts.isEmpty() ? (t != null ? t.getClass().getSimpleName() : "unknown failure") : String.join(": ", parts);
    }

    private synchronized void finish(MavenExecutionResult result) {
        Capture c = capture;
        if (finished || c == null) return;
        finished = true;
        try {
            for (Future<List<Map<String, Object>>> f : new ArrayList<Future<List<Map<String, Object>>>>(java.util.Arrays.asList(machine, git))) {
                try {
                    if (f != null) c.addAll(f.get(5, TimeUnit.SECONDS));
                } catch (Throwable ignored) {
                }
            }
            List<Map<String, Object>> list;
            synchronized (failures) {
                list = new ArrayList<Map<String, Object>>(failures);
            }
            boolean failed = result != null && result.hasExceptions();
            if (failed && list.isEmpty()) {
                for (Throwable t : result.getExceptions()) list.add(Capture.map("classification", "non-verification", "message", c.redactMessage(messageOf(t))));
            }
            // Tests' own output and the console are sent unless turned off.
            ConsoleCapture kept = console;
            if (kept != null) {
                kept.uninstall();
                long at = System.currentTimeMillis();
                for (Map<String, Object> data : kept.events()) c.event("ConsoleOutput", data, at);
            }
            c.event("ServerSettings", Capture.map("testOutputCapturingEnabled", c.testOutputOn, "buildOutputCapturingEnabled", kept != null), c.startedAt);
            c.event("BuildFinished", Capture.map("outcome", failed || !list.isEmpty() ? "failed" : "succeeded", "failures", list));
            String mavenVersion = runtime != null ? runtime.getMavenVersion() : "unknown";
            long t0 = System.nanoTime();
            c.deliver(c.line("jvmbuild", mavenVersion, VERSION));
            sendNanos = System.nanoTime() - t0;
        } catch (Throwable t) {
            System.out.println("Buildscope: the build could not be captured (" + t.getClass().getSimpleName() + ": " + t.getMessage() + ")");
        }
    }
}
