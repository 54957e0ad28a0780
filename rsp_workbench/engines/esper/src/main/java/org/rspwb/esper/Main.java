package org.rspwb.esper;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;


/**
 * C-SPARQL's architecture on the RSP Workbench test stand: Esper 9 (S2R, R2S) feeding Jena ARQ
 * (R2R). This program only translates the stand's JSON-lines protocol:
 *
 * <pre>
 *   register -> the query (csparql dialect) split into its window (an EPL statement built from
 *               the engine parameters window/stream/output/reference_point) and its SPARQL
 *   stimulus -> Esper's external clock advanced to t (advanceTimeSpan: each callback due on
 *               the way fires at its own time), then one Triple event per element of the
 *               query's stream
 *   listener -> the delivered events evaluated by Jena; one response, operation "=", t =
 *               Esper's current time when the listener fired
 *   advance  -> Esper's clock advanced to t
 *   close    -> nothing (Esper has no end of stream)
 * </pre>
 *
 * A Java exception or error (an OutOfMemoryError included) ends the run with one fatal error
 * line carrying its own message.
 */
public final class Main {
    private static final long FLUSH_PERIOD_NANOS = 1_000_000L;

    private final BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
    private long flushed = System.nanoTime();
    private EsperWindow esper;
    private Jena jena;
    private String stream;
    /** The stimulus being handled (responses name it), or null during advance. */
    private Long current;
    /** Tests only: run out of memory while handling this stimulus (RSPWB_ESPER_OOM_AT_STIMULUS). */
    private final Long oomAt = longOrNull(System.getenv("RSPWB_ESPER_OOM_AT_STIMULUS"));
    /**
     * Where the time goes (RSPWB_ESPER_PROFILE set: printed on stderr at close, for
     * benchmarks/bench_esper.py): nanoseconds handling stimulus and batch lines in all, and of
     * them inside Esper and Jena (the clock, the events, the evaluations; not the responses' text).
     * CPU time of this thread: on a loaded machine wall time would count the waits for a core.
     */
    private final boolean profile = System.getenv("RSPWB_ESPER_PROFILE") != null;
    private final java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
    private long handlingNanos;
    private long engineNanos;
    private long stimuliHandled;

    public static void main(String[] args) throws IOException {
        System.exit(new Main().serve());
    }

    private int serve() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        try {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                long received = clock();
                Map<String, Object> message = Json.object(Json.parse(line));
                String type = String.valueOf(message.get("type"));
                switch (type) {
                    case "register" -> register(message);
                    case "stimulus" -> {
                        stimulus(message);
                        out.flush();
                        handlingNanos += clock() - received;
                    }
                    case "batch" -> {
                        for (Object item : Json.list(message.get("stimuli"))) {
                            stimulus(Json.object(item));
                            flushIfDue();
                        }
                        out.flush();
                        handlingNanos += clock() - received;
                    }
                    case "advance" -> {
                        long t = Json.number(message.get("t"));
                        current = null;
                        esper.advanceTo(t);
                        write("{\"type\":\"done\",\"advance\":" + t + "}");
                        out.flush();
                    }
                    case "close" -> {
                        if (profile) {
                            System.err.println("{\"profile\":{\"stimuli\":" + stimuliHandled + ",\"handling_ns\":" + handlingNanos
                                    + ",\"engine_ns\":" + engineNanos + "}}");
                        }
                        write("{\"type\":\"done\",\"closed\":true}");
                        out.flush();
                        if (esper != null) {
                            esper.destroy();
                        }
                        return 0;
                    }
                    default -> throw new Refusal("unknown message type " + type);
                }
            }
            return 0;
        } catch (Throwable failure) { // OutOfMemoryError too: the run fails alone, with the JVM's message
            String text = oneLine(failure instanceof Refusal ? failure.getMessage() : failure.toString());
            System.err.println(text);
            write("{\"type\":\"error\",\"fatal\":true,\"message\":" + quote(text) + "}");
            out.flush();
            return 1;
        }
    }

    private void register(Map<String, Object> message) throws IOException {
        Map<String, Object> engine = Json.object(message.get("engine"));
        Map<String, Object> parameters = engine.get("parameters") instanceof Map ? Json.object(engine.get("parameters")) : Map.of();
        CsparqlQuery query = CsparqlQuery.parse(String.valueOf(Json.object(message.get("query")).get("text")));
        stream = query.stream;
        jena = new Jena(query.sparql);
        Map<String, Object> statics = message.get("static") instanceof Map ? Json.object(message.get("static")) : Map.of();
        if (statics.get("default") != null) {
            for (Object t : Json.list(statics.get("default"))) {
                List<Object> a = Json.list(t);
                jena.addStatic(null, text(a, 0), text(a, 1), text(a, 2));
            }
        }
        if (statics.get("named") != null) {
            Map<String, Object> named = Json.object(statics.get("named"));
            for (String graph : named.keySet()) {
                for (Object t : Json.list(named.get(graph))) {
                    List<Object> a = Json.list(t);
                    jena.addStatic("<" + graph + ">", text(a, 0), text(a, 1), text(a, 2));
                }
            }
        }
        String epl = EsperWindow.epl(string(parameters, "window", "time_batch"), string(parameters, "stream", "istream"),
                string(parameters, "output", null),
                parameters.get("reference_point") != null ? Json.number(parameters.get("reference_point")) : null,
                query.rangeMs, query.stepMs);
        esper = new EsperWindow(epl, this::evaluated);
        write("{\"type\":\"ready\",\"engine\":\"esper\",\"pid\":" + ProcessHandle.current().pid()
                + ",\"batch\":true,\"esper\":\"9.0.0\",\"jena\":\"5.6.0\",\"epl\":" + quote(epl) + "}");
        out.flush();
    }

    private void stimulus(Map<String, Object> message) throws IOException {
        long id = Json.number(message.get("id"));
        long t = Json.number(message.get("t"));
        current = id;
        if (oomAt != null && oomAt == id) {
            List<long[]> hog = new ArrayList<>();
            while (true) {
                hog.add(new long[1 << 20]);
            }
        }
        stimuliHandled++;
        List<Object> elements = Json.list(message.get("elements"));
        List<Object> streams = message.get("streams") != null ? Json.list(message.get("streams")) : null;
        long begin = clock(); // the engine's part: the clock, the events (and the listener's evaluations)
        esper.advanceTo(t);
        for (int i = 0; i < elements.size(); i++) {
            if (streams != null && !stream.equals(streams.get(i))) {
                continue; // a stream the query has no window over
            }
            List<Object> e = Json.list(elements.get(i));
            esper.send(new Triple(text(e, 0), text(e, 1), text(e, 2), e.size() > 3 ? text(e, 3) : null));
        }
        engineNanos += clock() - begin;
        write("{\"type\":\"done\",\"stimulus\":" + id + "}");
    }

    /** The listener fired: the window content Esper delivered, evaluated by Jena, as one response. */
    private void evaluated(long t, List<Triple> content) {
        List<Map<String, String>> solutions = jena.evaluate(content);
        long begin = clock(); // from here on the adapter's work, inside Esper's callback
        StringBuilder line = new StringBuilder(256);
        line.append("{\"type\":\"response\"");
        if (current != null) {
            line.append(",\"stimulus\":").append(current);
        }
        line.append(",\"t\":").append(t).append(",\"operation\":\"=\",\"bindings\":[");
        boolean first = true;
        for (Map<String, String> row : solutions) {
            line.append(first ? "{" : ",{");
            first = false;
            boolean firstVar = true;
            for (Map.Entry<String, String> binding : row.entrySet()) {
                if (!firstVar) {
                    line.append(',');
                }
                firstVar = false;
                line.append(quote(binding.getKey())).append(':').append(quote(binding.getValue()));
            }
            line.append('}');
        }
        line.append("],\"system_time\":").append(System.currentTimeMillis()).append('}');
        try {
            write(line.toString());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        engineNanos -= clock() - begin;
    }

    /** This thread's CPU time in ns when profiling, else 0 (no cost). */
    private long clock() {
        return profile ? cpu.getCurrentThreadCpuTime() : 0L;
    }

    private void write(String line) throws IOException {
        out.write(line);
        out.write('\n');
    }

    private void flushIfDue() throws IOException {
        long now = System.nanoTime();
        if (now - flushed >= FLUSH_PERIOD_NANOS) {
            out.flush();
            flushed = now;
        }
    }

    private static String text(List<Object> terms, int i) {
        if (!(terms.get(i) instanceof String term)) {
            throw new IllegalArgumentException("expected an N-Triples term, got " + terms.get(i));
        }
        return term;
    }

    private static String string(Map<String, Object> object, String key, String fallback) {
        return object.get(key) instanceof String value ? value : fallback;
    }

    private static Long longOrNull(String text) {
        return text == null || text.isBlank() ? null : Long.valueOf(text.trim());
    }

    private static String oneLine(String text) {
        return String.join(" ", (text == null ? "" : text).trim().split("\\s+"));
    }

    static String quote(String text) {
        StringBuilder b = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
