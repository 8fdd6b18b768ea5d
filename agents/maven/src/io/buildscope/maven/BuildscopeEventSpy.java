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
    private final List<Map<String, Object>> failures = new ArrayList<Map<String, Object>>();
    private final ExecutorService background = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "buildscope-agent");
        t.setDaemon(true);
        return t;
    });
    private Future<List<Map<String, Object>>> machine;
    private Future<List<Map<String, Object>>> git;
    private volatile boolean finished;
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
        c.event("BuildStarted", Capture.map(), start);
        c.event("BuildRequestedTasks", Capture.map("requested", new ArrayList<String>(request.getGoals()), "excluded", excludedProjects(request)));
        c.event("Environment", Capture.environment());
        c.event("BuildOptions", options(request));
        machine = background.submit(c::machineEvents);
        File base = request.getBaseDirectory() != null ? new File(request.getBaseDirectory()) : null;
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
                c.event("TaskStarted", Capture.map("id", id, "path", path));
                return true;
            }
            case MojoSucceeded:
                mojoFinished(c, e, "success");
                return true;
            case MojoSkipped:
                mojoFinished(c, e, "skipped");
                return true;
            case MojoFailed: {
                mojoFinished(c, e, "failed");
                Throwable t = e.getException();
                synchronized (failures) {
                    failures.add(Capture.map("classification", isVerification(e.getMojoExecution(), t) ? "verification" : "non-verification",
                        "message", c.redactMessage("Mojo " + path(e) + " failed: " + messageOf(t))));
                }
                return true;
            }
            default:
                return false;
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
            if (m != null && !parts.contains(m)) parts.add(m.trim());
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
