package org.rspwb.esper;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

import com.espertech.esper.common.client.EPCompiled;
import com.espertech.esper.common.client.EventBean;
import com.espertech.esper.common.client.configuration.Configuration;
import com.espertech.esper.compiler.client.CompilerArguments;
import com.espertech.esper.compiler.client.EPCompilerProvider;
import com.espertech.esper.runtime.client.EPDeployment;
import com.espertech.esper.runtime.client.EPEventService;
import com.espertech.esper.runtime.client.EPRuntime;
import com.espertech.esper.runtime.client.EPRuntimeProvider;

/**
 * S2R and R2S in Esper, as C-SPARQL 0.9 delegates them: one EPL statement over the stream's
 * events, on Esper's external clock, which the stand's application time advances. Each time the
 * statement's listener fires, its delivered events (the window content) go to the sink with
 * Esper's own current time.
 */
final class EsperWindow {
    private final EPRuntime runtime;
    private final EPEventService events;
    final String epl;

    EsperWindow(String epl, BiConsumer<Long, List<Triple>> sink) {
        this.epl = epl;
        Configuration config = new Configuration();
        config.getCommon().addEventType(Triple.class);
        config.getRuntime().getThreading().setInternalTimerEnabled(false);
        runtime = EPRuntimeProvider.getRuntime("rspwb-esper", config);
        events = runtime.getEventService();
        events.clockExternal();
        events.advanceTime(0); // application time 0: the statement starts there
        try {
            EPCompiled compiled = EPCompilerProvider.getCompiler().compile(epl, new CompilerArguments(config));
            EPDeployment deployment = runtime.getDeploymentService().deploy(compiled);
            deployment.getStatements()[0].addListener((newEvents, oldEvents, statement, rt) -> {
                List<Triple> content = new ArrayList<>(newEvents == null ? 0 : newEvents.length);
                if (newEvents != null) {
                    for (EventBean event : newEvents) {
                        content.add((Triple) event.getUnderlying());
                    }
                }
                sink.accept(rt.getEventService().getCurrentTime(), content);
            });
        } catch (Exception e) {
            throw new Refusal("Esper refused the statement " + epl + ": " + e.getMessage());
        }
    }

    /** The EPL for a window and output parameter combination (README.md explains each). */
    static String epl(String window, String stream, String output, Long referencePoint, long rangeMs, long stepMs) {
        if (!stream.equals("istream") && !stream.equals("rstream")) {
            throw new Refusal("parameter stream: expected istream or rstream, got " + stream);
        }
        String select = "select " + stream + " * from Triple";
        switch (window) {
            case "time_batch":
                if (rangeMs != stepMs) {
                    throw new Refusal("window time_batch is tumbling: RANGE must equal STEP (got "
                            + rangeMs + " ms and " + stepMs + " ms); use window: time for a sliding window");
                }
                if (output != null) {
                    throw new Refusal("parameter output goes with window: time (time_batch outputs each batch)");
                }
                return select + "#time_batch(" + rangeMs + " msec" + (referencePoint == null ? "" : ", " + referencePoint + "L") + ")";
            case "time":
                if (referencePoint != null) {
                    throw new Refusal("parameter reference_point goes with window: time_batch");
                }
                String kind = output == null ? "snapshot" : output;
                if (!kind.equals("snapshot") && !kind.equals("all")) {
                    throw new Refusal("parameter output: expected snapshot or all, got " + kind);
                }
                return select + "#time(" + rangeMs + " msec) output " + kind + " every " + stepMs + " msec";
            default:
                throw new Refusal("parameter window: expected time_batch or time, got " + window);
        }
    }

    /** Esper's clock to application time t, firing every callback due on the way at its own time. */
    void advanceTo(long t) {
        if (t > events.getCurrentTime()) {
            events.advanceTimeSpan(t);
        }
    }

    void send(Triple triple) {
        events.sendEventBean(triple, "Triple");
    }

    void destroy() {
        runtime.destroy();
    }
}
