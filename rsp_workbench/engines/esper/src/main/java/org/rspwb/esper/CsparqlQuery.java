package org.rspwb.esper;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A C-SPARQL query split as C-SPARQL 0.9 splits it: the stream clause (one window, S2R, for
 * Esper) and the rest, plain SPARQL 1.1 over the window content merged into the default graph
 * (R2R, for Jena ARQ). The stand sends the query in the {@code csparql} dialect.
 */
final class CsparqlQuery {
    private static final Pattern REGISTER = Pattern.compile(
            "REGISTER\\s+(?:QUERY|STREAM)\\s+\\S+\\s+(?:COMPUTED\\s+EVERY\\s+\\S+\\s+)?AS\\b", Pattern.CASE_INSENSITIVE);
    private static final Pattern STREAM = Pattern.compile(
            "FROM\\s+STREAM\\s*<([^>]*)>\\s*\\[\\s*RANGE\\s+(\\S+?)\\s+(?:(?:STEP|SLIDE)\\s+(\\S+?)|(TUMBLING))\\s*\\]",
            Pattern.CASE_INSENSITIVE);
    private static final Pattern STATIC = Pattern.compile("FROM\\s+(?:NAMED\\s+)?<[^>]*>", Pattern.CASE_INSENSITIVE);
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)", Pattern.CASE_INSENSITIVE);

    final String stream;
    final long rangeMs;
    final long stepMs;
    /** The query without its stream and dataset clauses: SPARQL 1.1 for Jena. */
    final String sparql;

    private CsparqlQuery(String stream, long rangeMs, long stepMs, String sparql) {
        this.stream = stream;
        this.rangeMs = rangeMs;
        this.stepMs = stepMs;
        this.sparql = sparql;
    }

    static CsparqlQuery parse(String text) {
        String rest = REGISTER.matcher(text).replaceFirst("");
        Matcher m = STREAM.matcher(rest);
        List<String[]> windows = new ArrayList<>();
        while (m.find()) {
            windows.add(new String[] {m.group(1), m.group(2), m.group(4) != null ? m.group(2) : m.group(3)});
        }
        if (windows.size() != 1) {
            throw new Refusal("the esper engine runs queries over exactly one window (FROM STREAM … [RANGE … STEP …]); this one has "
                    + windows.size());
        }
        String[] w = windows.get(0);
        String sparql = STATIC.matcher(STREAM.matcher(rest).replaceAll("")).replaceAll("");
        return new CsparqlQuery(w[0], duration(w[1]), duration(w[2]), sparql);
    }

    static long duration(String text) {
        Matcher m = DURATION.matcher(text);
        if (!m.matches()) {
            throw new Refusal("not a C-SPARQL duration: " + text);
        }
        long n = Long.parseLong(m.group(1));
        switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "ms": return n;
            case "s": return n * 1000L;
            case "m": return n * 60_000L;
            case "h": return n * 3_600_000L;
            default: return n * 86_400_000L;
        }
    }
}
