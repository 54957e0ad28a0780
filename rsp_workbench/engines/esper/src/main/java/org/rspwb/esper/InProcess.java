package org.rspwb.esper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import java.util.Map;

/**
 * The engine alone, in-process, for the overhead measurement (benchmarks/bench_esper.py): the
 * stimuli of a file of protocol lines are read and turned into events before the clock starts,
 * then only what the adapter asks of Esper and Jena per stimulus is timed — the clock advanced,
 * the events sent, each posted window evaluated — with no JSON and no pipe. Prints one JSON object.
 *
 * <pre>java -cp target/rspwb-esper.jar org.rspwb.esper.InProcess MESSAGES.jsonl</pre>
 */
public final class InProcess {
    private static long bindings;

    public static void main(String[] args) throws IOException {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        Map<String, Object> register = Json.object(Json.parse(lines.get(0)));
        Map<String, Object> parameters = Json.object(Json.object(register.get("engine")).get("parameters"));
        CsparqlQuery query = CsparqlQuery.parse((String) Json.object(register.get("query")).get("text"));
        Jena jena = new Jena(query.sparql);
        String window = parameters.get("window") instanceof String w ? w : "time_batch";
        EsperWindow esper = new EsperWindow(EsperWindow.epl(window, "istream", null, null, query.rangeMs, query.stepMs),
                (t, content) -> bindings += jena.evaluate(content).size());
        List<Long> times = new ArrayList<>();
        List<Triple[]> events = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            Map<String, Object> message = Json.object(Json.parse(line));
            if (!"stimulus".equals(message.get("type"))) {
                continue;
            }
            times.add(Json.number(message.get("t")));
            List<Object> elements = Json.list(message.get("elements"));
            Triple[] stimulus = new Triple[elements.size()];
            for (int i = 0; i < stimulus.length; i++) {
                List<Object> e = Json.list(elements.get(i));
                stimulus[i] = new Triple((String) e.get(0), (String) e.get(1), (String) e.get(2), null);
            }
            events.add(stimulus);
        }
        long[] spent = new long[events.size()];
        long started = System.nanoTime();
        for (int k = 0; k < spent.length; k++) {
            long begin = System.nanoTime();
            esper.advanceTo(times.get(k));
            for (Triple triple : events.get(k)) {
                esper.send(triple);
            }
            spent[k] = System.nanoTime() - begin;
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        long[] sorted = spent.clone();
        Arrays.sort(sorted);
        System.out.println("{\"stimuli\":" + spent.length + ",\"seconds\":" + seconds + ",\"us_per_stimulus\":"
                + (seconds * 1e6 / spent.length) + ",\"median_us\":" + (sorted[sorted.length / 2] / 1e3)
                + ",\"bindings\":" + bindings + ",\"peak_rss_kb\":" + peakRssKb() + "}");
        esper.destroy();
    }

    private static long peakRssKb() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmHWM:")) {
                return Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        return -1;
    }
}
