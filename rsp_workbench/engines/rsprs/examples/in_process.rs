//! The engine alone, in-process: the same stimuli the stand sends (a file of protocol lines:
//! `register`, then `stimulus` lines), their quads built before the clock starts, pushed into
//! rsp-rs with no protocol, no process boundary. Two ways:
//!
//! * `direct`: each stimulus's `QuadContainer` handed to the window on this thread, the results
//!   drained after each — exactly the engine calls the adapter makes (src/main.rs);
//! * `threads`: `RDFStream::add_quads` per stimulus, the way the crate's README runs it (its stream
//!   thread does the window work), timed until the last result of a final `close_stream` arrives.
//!
//! Prints one JSON object: stimuli, elements, bindings, seconds and µs per stimulus for each
//! way, and the process's peak RSS (VmHWM). Used by benchmarks/bench_rsprs.py; by hand:
//! `cargo run --release --locked --example in_process -- MESSAGES.jsonl`.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::str::FromStr;
use std::time::{Duration, Instant};


use oxigraph::model::{GraphName, NamedNode, NamedOrBlankNode, Quad, Term};
use rsp_rs::{QuadContainer, RSPEngine};
use serde_json::{json, Value};

fn quad(element: &Value) -> Quad {
    let term = |i: usize| Term::from_str(element[i].as_str().unwrap()).unwrap();
    Quad::new(
        NamedOrBlankNode::try_from(term(0)).unwrap(),
        NamedNode::try_from(term(1)).unwrap(),
        term(2),
        GraphName::DefaultGraph,
    )
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse().unwrap_or(0)))
        .unwrap_or(0)
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: in_process MESSAGES.jsonl");
    let mut query = String::new();
    let mut stimuli: Vec<(i64, Vec<Quad>)> = Vec::new();
    for line in BufReader::new(std::fs::File::open(path).unwrap()).lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        match message["type"].as_str() {
            Some("register") => query = message["query"]["text"].as_str().unwrap().to_string(),
            Some("stimulus") => stimuli.push((
                message["t"].as_i64().unwrap(),
                message["elements"].as_array().unwrap().iter().map(quad).collect(),
            )),
            _ => {}
        }
    }
    let elements: usize = stimuli.iter().map(|(_, q)| q.len()).sum();

    // direct: the adapter's engine calls
    let mut engine = RSPEngine::new(query.clone());
    engine.initialize().unwrap();
    let results = engine.start_processing();
    let definition = engine.parsed_query().s2r[0].clone();
    let window = engine.get_window(&definition.window_name).unwrap();
    let mut direct_bindings = 0usize;
    let mut each: Vec<f64> = Vec::with_capacity(stimuli.len());
    let started = Instant::now();
    for (t, quads) in &stimuli {
        let one = Instant::now();
        let container = QuadContainer::new(quads.iter().cloned().collect::<HashSet<Quad>>(), *t);
        let mut win = window.lock().unwrap();
        for q in &container.elements {
            win.add(q.clone(), container.last_timestamp_changed);
        }
        drop(win);
        while results.try_recv().is_ok() {
            direct_bindings += 1;
        }
        each.push(one.elapsed().as_secs_f64() * 1e6);
    }
    each.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median_us = each.get(each.len() / 2).copied().unwrap_or(0.0);
    let direct_s = started.elapsed().as_secs_f64();
    drop(results);
    drop(engine);

    // threads: the crate's own streaming path
    let mut engine = RSPEngine::new(query);
    engine.initialize().unwrap();
    let results = engine.start_processing();
    let stream = engine.get_stream(&definition.stream_name).unwrap();
    let last_t = stimuli.last().map(|(t, _)| *t).unwrap_or(0);
    let started = Instant::now();
    for (t, quads) in &stimuli {
        stream.add_quads(quads.clone(), *t).unwrap();
    }
    engine.close_stream(&definition.stream_name, last_t + definition.width + definition.slide).unwrap();
    // the stream thread has handled everything once it ends: drop every sender, wait for it to drop
    // its handle on the window
    let window = engine.get_window(&definition.window_name).unwrap();
    let before = std::sync::Arc::strong_count(&window);
    drop(stream);
    drop(engine);
    while std::sync::Arc::strong_count(&window) > before - 2 {
        std::thread::sleep(Duration::from_micros(50));
    }
    let threads_s = started.elapsed().as_secs_f64();
    let threads_bindings = results.try_iter().count();

    let n = stimuli.len().max(1) as f64;
    println!(
        "{}",
        json!({
            "stimuli": stimuli.len(), "elements": elements,
            "direct": {"seconds": direct_s, "us_per_stimulus": direct_s * 1e6 / n, "median_us": median_us,
                       "bindings": direct_bindings},
            "threads": {"seconds": threads_s, "us_per_stimulus": threads_s * 1e6 / n, "bindings": threads_bindings,
                        "note": "until the stream thread has handled the close_stream sentinel"},
            "peak_rss_kb": peak_rss_kb(),
        })
    );
}
