package io.buildscope.maven;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The build's console: what Maven writes to System.out and System.err while the build runs. Maven's
 * logging gives a core extension no listener, and its logger (Maven's slf4j simple provider) keeps
 * the stream it found when it started (`cacheOutputStream=true` in conf/logging/simplelogger.properties):
 * replacing System.out alone caught only what the tests printed. So the logger's kept stream is
 * replaced too (its OutputChoice, by reflection: Maven 3.x's provider; where that is not there,
 * the console is what reaches System.out and System.err). Each byte still goes to the stream that
 * was there, unchanged and first; a copy is kept, in the order written, up to the contract's
 * consoleChars (then cut and said so). Everything is put back when the build ends.
 */
final class ConsoleCapture {
    /** A ConsoleOutput event's text at most (the console's chunks, in order). */
    private static final int CHUNK = 64 * 1024;

    private final int limit;
    private final List<Object[]> parts = new ArrayList<Object[]>(); // {stream name, ByteArrayOutputStream}
    private int size;
    private boolean cut;
    private final PrintStream out;
    private final PrintStream err;

    private ConsoleCapture(int limit) {
        this.limit = limit;
        this.out = System.out;
        this.err = System.err;
    }

    /** The logger's kept stream (OutputChoice.targetPrintStream) and what it was, to put it back. */
    private java.lang.reflect.Field loggerField;
    private Object loggerChoice;
    private PrintStream loggerStream;

    /** Starts keeping the console (System.out, System.err and the logger's stream replaced by copying streams). */
    static ConsoleCapture install(int limit) {
        ConsoleCapture c = new ConsoleCapture(limit);
        System.setOut(c.copying(c.out, "stdout"));
        System.setErr(c.copying(c.err, "stderr"));
        c.redirectLogger();
        return c;
    }

    private void redirectLogger() {
        try {
            Class<?> factories = Class.forName("org.slf4j.LoggerFactory");
            Object factory = factories.getMethod("getILoggerFactory").invoke(null);
            Class<?> simple = Class.forName("org.slf4j.impl.SimpleLogger", true, factory.getClass().getClassLoader());
            java.lang.reflect.Field params = simple.getDeclaredField("CONFIG_PARAMS");
            params.setAccessible(true);
            Object config = params.get(null);
            java.lang.reflect.Field choiceField = config.getClass().getDeclaredField("outputChoice");
            choiceField.setAccessible(true);
            Object choice = choiceField.get(config);
            java.lang.reflect.Field target = choice.getClass().getDeclaredField("targetPrintStream");
            target.setAccessible(true);
            PrintStream kept = (PrintStream) target.get(choice);
            if (kept == null) return; // not cached: it looks System.out up, already replaced
            target.set(choice, copying(kept, kept == err ? "stderr" : "stdout"));
            loggerField = target;
            loggerChoice = choice;
            loggerStream = kept;
        } catch (Throwable ignored) {
            // another logging provider: the console is what reaches System.out and System.err
        }
    }

    private PrintStream copying(PrintStream target, String stream) {
        return new PrintStream(new OutputStream() {
            @Override
            public void write(int b) {
                target.write(b);
                keep(stream, new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                target.write(b, off, len);
                keep(stream, b, off, len);
            }

            @Override
            public void flush() {
                target.flush();
            }
        }, true);
    }

    private synchronized void keep(String stream, byte[] b, int off, int len) {
        try {
            if (cut || len <= 0) return;
            int room = limit - size;
            if (len > room) {
                len = Math.max(room, 0);
                cut = true;
            }
            Object[] last = parts.isEmpty() ? null : parts.get(parts.size() - 1);
            if (last == null || !last[0].equals(stream)) {
                last = new Object[] {stream, new ByteArrayOutputStream()};
                parts.add(last);
            }
            ((ByteArrayOutputStream) last[1]).write(b, off, len);
            size += len;
        } catch (Throwable ignored) {
            // never the build's problem
        }
    }

    /** Puts the streams that were there back (the copies are no longer fed). */
    void uninstall() {
        System.out.flush();
        System.err.flush();
        System.setOut(out);
        System.setErr(err);
        try {
            if (loggerField != null) loggerField.set(loggerChoice, loggerStream);
        } catch (Throwable ignored) {
            // the copy stays in place: it still passes every byte on
        }
    }

    /** The ConsoleOutput events' data: each stream's run of output in chunks, in order; the last one says when the console was cut. */
    synchronized List<Map<String, Object>> events() {
        List<Map<String, Object>> out = new ArrayList<Map<String, Object>>();
        Charset charset = Charset.defaultCharset();
        for (Object[] part : parts) {
            String text = new String(((ByteArrayOutputStream) part[1]).toByteArray(), charset);
            for (int i = 0; i < text.length(); i += CHUNK) {
                out.add(Capture.map("stream", part[0], "text", text.substring(i, Math.min(text.length(), i + CHUNK))));
            }
        }
        if (cut && !out.isEmpty()) out.get(out.size() - 1).put("truncated", Boolean.TRUE);
        return out;
    }
}
