//! rsp-rs 0.3.5 alone, through its own public API only (no workbench, no adapter): the
//! behaviours README.md reports, each reproduced as the crate's users would meet them.
//! Run: `cargo test --release --locked` in rsp_workbench/engines/rsprs.

use std::sync::mpsc::Receiver;
use std::time::Duration;

use oxigraph::model::{GraphName, Literal, NamedNode, Quad};
use rsp_rs::{BindingWithTimestamp, RSPEngine};

const STREAM: &str = "http://ex.org/s";

fn query(range: i64, step: i64) -> String {
    format!(
        "PREFIX ex: <http://ex.org/>\nREGISTER RStream <http://ex.org/out> AS\nSELECT ?s\n\
         FROM NAMED WINDOW ex:w ON STREAM ex:s [RANGE {range} STEP {step}]\nWHERE {{\n\
         WINDOW ex:w {{ ?s ex:p ?o }}\n}}"
    )
}

fn element(name: &str) -> Quad {
    Quad::new(
        NamedNode::new(format!("http://ex.org/{name}")).unwrap(),
        NamedNode::new("http://ex.org/p").unwrap(),
        Literal::new_simple_literal("v"),
        GraphName::DefaultGraph,
    )
}

/// Feed `(name, t)` elements one `add_quads` each, then `close_stream(final)`; every binding's subject
/// name with the `timestamp_from` the engine gives it, in arrival order.
fn run(q: &str, elements: &[(&str, i64)], final_timestamp: i64) -> Vec<(String, i64)> {
    let mut engine = RSPEngine::new(q.to_string());
    engine.initialize().unwrap();
    let results: Receiver<BindingWithTimestamp> = engine.start_processing();
    let stream = engine.get_stream(STREAM).unwrap();
    for (name, t) in elements {
        stream.add_quads(vec![element(name)], *t).unwrap();
    }
    engine.close_stream(STREAM, final_timestamp).unwrap();
    let mut out = Vec::new();
    while let Ok(result) = results.recv_timeout(Duration::from_millis(500)) {
        let name = result.bindings.split("http://ex.org/").nth(1).unwrap().split('"').next().unwrap().to_string();
        out.push((name, result.timestamp_from));
    }
    out
}

fn sorted(mut got: Vec<(String, i64)>) -> Vec<(String, i64)> {
    got.sort();
    got
}

fn pairs(rows: &[(&str, i64)]) -> Vec<(String, i64)> {
    sorted(rows.iter().map(|(s, t)| (s.to_string(), *t)).collect())
}

#[test]
fn windows_are_anchored_at_the_first_elements_time() {
    // t0 = 1300 (the first element): windows [1300, 2300), [2300, 3300), … — `a` and `b` share one,
    // reported when `c` arrives; `c`'s window by the close_stream sentinel. (Anchored at 0, as RSP-JS,
    // they would be apart: [1000, 2000) holds a, [2000, 3000) holds b.) `timestamp_from` is not the
    // window's opening but the last time the reported window changed (rsp_engine.rs:147,173).
    let got = run(&query(1000, 1000), &[("a", 1300), ("b", 2200), ("c", 3500)], 10_000);
    assert_eq!(sorted(got), pairs(&[("a", 2200), ("b", 2200), ("c", 3500)]));
}

#[test]
fn a_first_element_at_time_0_does_not_anchor_the_windows_the_next_element_does() {
    // `if self.t0 == 0 { self.t0 = t_e }` (csparql_window.rs:256-258): t0 stays 0 after an element at 0,
    // so the element at 1300 becomes the origin; `b` (1300) and `c` (2200) then share [1300, 2300).
    // Anchored at the first element (0) they would be apart: [1000, 2000) and [2000, 3000).
    let got = run(&query(1000, 1000), &[("a", 0), ("b", 1300), ("c", 2200), ("d", 3500)], 10_000);
    assert_eq!(sorted(got), pairs(&[("a", 0), ("b", 2200), ("c", 2200), ("d", 3500)]));
}

#[test]
fn one_element_closing_several_windows_reports_only_the_latest() {
    // ω = 2000, β = 1000, t0 = 1000. At 2400, [0, 2000) is reported (start, a). `c` at 5600 closes
    // [1000, 3000) (start, a, b) and [2000, 4000) (b): only the latest close is reported
    // (csparql_window.rs:169-190), the other is evicted unreported. The sentinel reports [5000, 7000).
    let got = run(&query(2000, 1000), &[("start", 1000), ("a", 1600), ("b", 2400), ("c", 5600)], 20_000);
    assert_eq!(sorted(got), pairs(&[("start", 1600), ("a", 1600), ("b", 2400), ("c", 5600)]));
}

#[test]
fn the_empty_window_closing_at_the_first_element_is_evaluated() {
    // At the first element (t0 = 1000) `scope` finds c_sup = t0 and creates [t0 − ω, t0) = [0, 1000)
    // (csparql_window.rs:262-264), a window no element can enter; the next element (1500) closes it
    // and it is evaluated: COUNT answers 0 once before the first real window [1000, 2000) (2 at 2500).
    let q = "PREFIX ex: <http://ex.org/>\nREGISTER RStream <http://ex.org/out> AS\nSELECT (COUNT(?s) AS ?n)\n\
             FROM NAMED WINDOW ex:w ON STREAM ex:s [RANGE 1000 STEP 1000]\nWHERE {\n\
             WINDOW ex:w { ?s ex:p ?o }\n}";
    let mut engine = RSPEngine::new(q.to_string());
    engine.initialize().unwrap();
    let results = engine.start_processing();
    let stream = engine.get_stream(STREAM).unwrap();
    for (name, t) in [("a", 1000), ("b", 1500), ("c", 2500)] {
        stream.add_quads(vec![element(name)], t).unwrap();
    }
    let mut counts = Vec::new();
    while let Ok(result) = results.recv_timeout(Duration::from_millis(500)) {
        counts.push(result.bindings.split("value: \"").nth(1).unwrap().split('"').next().unwrap().to_string());
    }
    assert_eq!(counts, ["0", "2"]);
}

fn two_windows(pattern_on: &str) -> String {
    format!(
        "PREFIX ex: <http://ex.org/>\nREGISTER RStream <http://ex.org/out> AS\nSELECT ?s\n\
         FROM NAMED WINDOW ex:w1 ON STREAM ex:s [RANGE 1000 STEP 1000]\n\
         FROM NAMED WINDOW ex:w2 ON STREAM ex:s [RANGE 1000 STEP 1000]\nWHERE {{\n\
         WINDOW {pattern_on} {{ ?s ex:p ?o }}\n}}"
    )
}

#[test]
fn two_windows_over_one_stream_feed_only_the_last() {
    // `streams.insert(stream_name, …)` (rsp_engine.rs:105): the second window's sender replaces the
    // first's, so the first window never receives an element.
    assert_eq!(run(&two_windows("ex:w2"), &[("a", 1300), ("b", 2500)], 10_000).len(), 2);
    assert_eq!(run(&two_windows("ex:w1"), &[("a", 1300), ("b", 2500)], 10_000), vec![]);
}

#[test]
fn step_0_panics_in_the_streams_thread_and_the_stream_then_refuses_data() {
    // `STEP 0` parses (rspql_parser.rs:43-48); `scope` divides by the slide (csparql_window.rs:263) and
    // panics in the stream's thread (rsp_engine.rs:109-117), which dies; the caller sees no panic, only
    // that later `add_quads` fail.
    let mut engine = RSPEngine::new(query(1000, 0));
    engine.initialize().unwrap();
    let _results = engine.start_processing();
    let stream = engine.get_stream(STREAM).unwrap();
    assert!(stream.add_quads(vec![element("a")], 1000).is_ok());
    // once the thread has unwound (its receiver dropped) the stream refuses data; until then it takes it
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match stream.add_quads(vec![element("b")], 2000) {
            Err(refused) => {
                assert!(refused.contains("Failed to send data to window"), "{refused}");
                break;
            }
            Ok(()) => {
                assert!(std::time::Instant::now() < deadline, "the stream still takes data 20 s after the panic");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}
