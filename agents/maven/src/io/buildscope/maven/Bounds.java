package io.buildscope.maven;

import java.util.Map;

/** What the extension sends at most (the `bounds` of agents/agent-contract.json, written in when the extension is built). */
final class Bounds {
    private Bounds() {
    }

    static final int TEST_OUTPUT = bound("testOutputChars", 65536);
    static final int STACK_TRACE = bound("stackTraceChars", 16384);
    static final int MESSAGE = bound("messageChars", 8192);
    static final int OUTPUT_TAIL = bound("outputTailChars", 16384);
    static final int CONSOLE = bound("consoleChars", 1048576);
    /** Dependencies listed per build, all ResolvedDependencies events together; those past it are only counted. */
    static final int BUILD_DEPENDENCIES = bound("buildDependencies", 10000);

    @SuppressWarnings("unchecked")
    static int bound(String name, int fallback) {
        try {
            Object v = ((Map<String, Object>) Contract.CONTRACT.get("bounds")).get(name);
            return v instanceof Number ? ((Number) v).intValue() : fallback;
        } catch (RuntimeException e) {
            return fallback;
        }
    }

    static String head(String text, int max) {
        return text == null || text.length() <= max ? text : text.substring(0, max);
    }

    static String tail(String text, int max) {
        return text == null || text.length() <= max ? text : text.substring(text.length() - max);
    }
}
