package org.rspwb.esper;

/**
 * One stream element as an Esper event (a Java bean: Esper reads its getters). The terms stay
 * N-Triples text; Jena parses them only when a window is evaluated.
 */
public final class Triple {
    private final String s;
    private final String p;
    private final String o;
    private final String g;

    public Triple(String s, String p, String o, String g) {
        this.s = s;
        this.p = p;
        this.o = o;
        this.g = g;
    }

    public String getS() {
        return s;
    }

    public String getP() {
        return p;
    }

    public String getO() {
        return o;
    }

    /** The element's graph (a quad), or null for a triple. */
    public String getG() {
        return g;
    }
}
