package org.rspwb.esper;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.jena.graph.Graph;
import org.apache.jena.graph.Node;
import org.apache.jena.query.DatasetFactory;
import org.apache.jena.query.Query;
import org.apache.jena.query.QueryExecution;
import org.apache.jena.query.QueryExecutionFactory;
import org.apache.jena.query.QueryFactory;
import org.apache.jena.query.ResultSet;
import org.apache.jena.riot.out.NodeFmtLib;
import org.apache.jena.sparql.core.DatasetGraph;
import org.apache.jena.sparql.core.DatasetGraphFactory;
import org.apache.jena.sparql.core.Quad;
import org.apache.jena.sparql.core.Var;
import org.apache.jena.sparql.engine.binding.Binding;
import org.apache.jena.sparql.util.NodeFactoryExtra;

/**
 * R2R as C-SPARQL 0.9 does it: the window content Esper hands over, merged into the default
 * graph with the static data, and the query's SPARQL evaluated on it by Jena ARQ — a new
 * in-memory dataset per evaluation.
 */
final class Jena {
    /** Parsed terms are kept for reuse, up to this many (then the cache starts again). */
    private static final int TERM_CACHE = 200_000;

    private final Query query;
    private final List<org.apache.jena.graph.Triple> staticDefault = new ArrayList<>();
    private final List<Quad> staticNamed = new ArrayList<>();
    private final Map<String, Node> terms = new HashMap<>();

    Jena(String sparql) {
        this.query = QueryFactory.create(sparql);
        if (!query.isSelectType()) {
            throw new Refusal("the esper engine answers SELECT queries only");
        }
        evaluate(List.of()); // dropped: ARQ loads its classes now, at registration, not in the first window's latency
    }

    Node node(String text) {
        Node node = terms.get(text);
        if (node == null) {
            if (terms.size() >= TERM_CACHE) {
                terms.clear();
            }
            node = NodeFactoryExtra.parseNode(text);
            terms.put(text, node);
        }
        return node;
    }

    void addStatic(String graph, String s, String p, String o) {
        if (graph == null) {
            staticDefault.add(org.apache.jena.graph.Triple.create(node(s), node(p), node(o)));
        } else {
            staticNamed.add(Quad.create(node(graph), node(s), node(p), node(o)));
        }
    }

    /** The query's solutions over the window content: variable name to N-Triples term, in order. */
    List<Map<String, String>> evaluate(List<Triple> window) {
        DatasetGraph dataset = DatasetGraphFactory.create();
        Graph merged = dataset.getDefaultGraph();
        for (org.apache.jena.graph.Triple t : staticDefault) {
            merged.add(t);
        }
        for (Quad q : staticNamed) {
            dataset.add(q);
        }
        for (Triple e : window) {
            if (e.getG() == null) {
                merged.add(org.apache.jena.graph.Triple.create(node(e.getS()), node(e.getP()), node(e.getO())));
            } else {
                dataset.add(Quad.create(node(e.getG()), node(e.getS()), node(e.getP()), node(e.getO())));
            }
        }
        List<Map<String, String>> solutions = new ArrayList<>();
        try (QueryExecution execution = QueryExecutionFactory.create(query, DatasetFactory.wrap(dataset))) {
            ResultSet results = execution.execSelect();
            List<Var> vars = Var.varList(results.getResultVars());
            while (results.hasNext()) {
                Binding binding = results.nextBinding();
                Map<String, String> row = new LinkedHashMap<>();
                for (Var v : vars) {
                    Node value = binding.get(v);
                    if (value != null) {
                        row.put(v.getVarName(), NodeFmtLib.strNT(value));
                    }
                }
                solutions.add(row);
            }
        }
        return solutions;
    }
}
