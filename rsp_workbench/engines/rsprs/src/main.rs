//! rsp-rs (crates.io `rsp-rs`, pinned `=0.3.5` in Cargo.toml) on the RSP Workbench test stand.
//!
//! This program only translates messages (the point is to measure the engine):
//!
//!   register  -> `RSPEngine::new(query.text)` (the stand sends the query in the `rspjs` dialect,
//!                whose line-based form rsp-rs's parser reads too), `initialize()`, static triples
//!                -> `add_static_data`, `start_processing()` for the engine's result channel
//!   stimulus  -> for each stream IRI of the stimulus, the `QuadContainer` that
//!                `RDFStream::add_quads` builds, handed to that stream's window exactly as the
//!                engine's stream thread does (`window.lock().add(quad, t)` per quad), but on
//!                this thread, so the adapter knows when the engine has finished the stimulus
//!   results   -> one `response` per `BindingWithTimestamp` the engine sends (one per binding),
//!                operation "=", `t` = the application time of the stimulus during which the
//!                engine evaluated
//!   advance   -> nothing: rsp-rs has no notion of time passing without data
//!   close     -> nothing, or with `parameters.close_stream` the engine's own `close_stream`
//!                sentinel on every stream, waiting until the engine's threads have handled it
//!
//! A panic inside the engine becomes one fatal `error` line with the engine's own message.
//! README.md cites the crate's lines for the semantics this yields.

mod bindings;

use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, BufReader, Write};
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use oxigraph::model::{GraphName, NamedNode, NamedOrBlankNode, Quad, Term};
use rsp_rs::{BindingWithTimestamp, CSPARQLWindow, QuadContainer, RSPEngine};
use serde_json::{json, Map, Value};

const ENGINE_VERSION: &str = "0.3.5";
/// In a batch, written `done`s reach the stand at least this often (as the kits do).
const FLUSH_PERIOD: Duration = Duration::from_millis(1);
/// How long `close` waits for the engine's stream threads to handle the sentinel.
const CLOSE_WAIT: Duration = Duration::from_secs(30);

/// The last panic's message and place, kept by the panic hook for the fatal `error` line.
static PANIC: Mutex<Option<String>> = Mutex::new(None);

struct Failure(String);

type Outcome<T> = Result<T, Failure>;

/// The engine and what the adapter needs to drive it.
struct Stand {
    engine: RSPEngine,
    results: Receiver<BindingWithTimestamp>,
    /// stream IRI -> the window the engine feeds from it (its `streams` map: the last window over
    /// a stream wins, rsp_engine.rs:105)
    windows: HashMap<String, Arc<Mutex<CSPARQLWindow>>>,
    first_stream: String,
    close_stream: Option<Value>,
    last_t: Option<i64>,
    widest: i64,
    /// Tests only: panic while handling this stimulus id (`RSPWB_RSPRS_PANIC_AT_STIMULUS`), to show that
    /// a panic fails the run alone, with its message; the crate's own panics take the same path.
    panic_at: Option<i64>,
}

struct Output {
    out: io::StdoutLock<'static>,
    flushed: Instant,
}

impl Output {
    fn send(&mut self, message: &Value) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, message)?;
        self.out.write_all(b"\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flushed = Instant::now();
        self.out.flush()
    }

    fn flush_if_due(&mut self) -> io::Result<()> {
        if self.flushed.elapsed() >= FLUSH_PERIOD {
            self.flush()?;
        }
        Ok(())
    }
}

fn system_time() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Run `f`; a panic inside the engine becomes a `Failure` with the panic's own message.
fn guarded<T>(f: impl FnOnce() -> Outcome<T>) -> Outcome<T> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let recorded = PANIC.lock().ok().and_then(|mut p| p.take());
            let message = recorded.unwrap_or_else(|| {
                payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_string())
            });
            Err(Failure(format!("rsp-rs panicked: {}", one_line(&message))))
        }
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parse_term(text: &str) -> Outcome<Term> {
    Term::from_str(text).map_err(|e| Failure(format!("not an N-Triples term: {text} ({e})")))
}

fn element_quad(element: &Value) -> Outcome<Quad> {
    let parts = element.as_array().ok_or_else(|| Failure(format!("an element is not a list: {element}")))?;
    let text = |i: usize| -> Outcome<&str> {
        parts.get(i).and_then(Value::as_str).ok_or_else(|| Failure(format!("element {element} has no term {i}")))
    };
    let subject = NamedOrBlankNode::try_from(parse_term(text(0)?)?)
        .map_err(|_| Failure(format!("the subject of {element} is a literal")))?;
    let predicate = NamedNode::try_from(parse_term(text(1)?)?)
        .map_err(|_| Failure(format!("the predicate of {element} is not an IRI")))?;
    let object = parse_term(text(2)?)?;
    let graph = match parts.get(3).and_then(Value::as_str) {
        None => GraphName::DefaultGraph,
        Some(g) => match parse_term(g)? {
            Term::NamedNode(n) => GraphName::NamedNode(n),
            Term::BlankNode(b) => GraphName::BlankNode(b),
            _ => return Err(Failure(format!("the graph of {element} is a literal"))),
        },
    };
    Ok(Quad::new(subject, predicate, object, graph))
}

fn static_quad(triple: &Value, graph: GraphName) -> Outcome<Quad> {
    let mut quad = element_quad(triple)?;
    quad.graph_name = graph;
    Ok(quad)
}

impl Stand {
    fn register(message: &Value) -> Outcome<(Stand, Value)> {
        let text = message.pointer("/query/text").and_then(Value::as_str).unwrap_or("").to_string();
        let parameters = message.pointer("/engine/parameters").cloned().unwrap_or(json!({}));
        let mut engine = RSPEngine::new(text);
        engine.initialize().map_err(Failure)?;
        let definitions = engine.parsed_query().s2r.clone();
        if definitions.is_empty() {
            return Err(Failure(
                "rsp-rs found no window in the query: it reads lines `FROM NAMED WINDOW <w> ON STREAM <s> \
                 [RANGE n STEP n]` (the rspjs dialect: `rspwb query translate FILE --to rspjs`)"
                    .to_string(),
            ));
        }
        if let Some(statics) = message.get("static") {
            for triple in statics.get("default").and_then(Value::as_array).into_iter().flatten() {
                engine.add_static_data(static_quad(triple, GraphName::DefaultGraph)?);
            }
            for (graph, triples) in statics.get("named").and_then(Value::as_object).into_iter().flatten() {
                let name = NamedNode::new(graph.as_str()).map_err(|e| Failure(format!("static graph {graph}: {e}")))?;
                for triple in triples.as_array().into_iter().flatten() {
                    engine.add_static_data(static_quad(triple, GraphName::NamedNode(name.clone()))?);
                }
            }
        }
        let results = engine.start_processing();
        let mut windows = HashMap::new();
        for definition in &definitions {
            let window = engine
                .get_window(&definition.window_name)
                .ok_or_else(|| Failure(format!("rsp-rs made no window {}", definition.window_name)))?;
            windows.insert(definition.stream_name.clone(), window);
        }
        let widest = definitions.iter().map(|d| d.width + d.slide).max().unwrap_or(0);
        let close_stream = parameters.get("close_stream").filter(|v| !matches!(v, Value::Bool(false) | Value::Null)).cloned();
        let streams: Vec<&String> = definitions.iter().map(|d| &d.stream_name).collect();
        let ready = json!({"engine": "rsp-rs", "version": ENGINE_VERSION, "streams": streams});
        let first_stream = definitions[0].stream_name.clone();
        let panic_at = std::env::var("RSPWB_RSPRS_PANIC_AT_STIMULUS").ok().and_then(|id| id.parse().ok());
        let stand = Stand { engine, results, windows, first_stream, close_stream, last_t: None, widest, panic_at };
        Ok((stand, ready))
    }

    /// Hand the stimulus's elements to the engine, stream by stream, as its stream threads would.
    fn push(&mut self, stimulus: &Value) -> Outcome<()> {
        let t = stimulus.get("t").and_then(Value::as_i64).ok_or_else(|| Failure("a stimulus without t".into()))?;
        let elements = stimulus.get("elements").and_then(Value::as_array).cloned().unwrap_or_default();
        let tags = stimulus.get("streams").and_then(Value::as_array);
        let mut order: Vec<String> = Vec::new();
        let mut per_stream: HashMap<String, Vec<Quad>> = HashMap::new();
        for (index, element) in elements.iter().enumerate() {
            let stream = match tags.and_then(|tags| tags.get(index)).and_then(Value::as_str) {
                Some(iri) => iri.to_string(),
                None => self.first_stream.clone(),
            };
            if !self.windows.contains_key(&stream) {
                continue; // an element of a stream the query has no window over
            }
            let quad = element_quad(element)?;
            per_stream.entry(stream.clone()).or_insert_with(|| {
                order.push(stream.clone());
                Vec::new()
            }).push(quad);
        }
        self.last_t = Some(t);
        if self.panic_at.is_some() && self.panic_at == stimulus.get("id").and_then(Value::as_i64) {
            guarded::<()>(|| panic!("forced by RSPWB_RSPRS_PANIC_AT_STIMULUS at stimulus {}", self.panic_at.unwrap_or(0)))?;
        }
        for stream in order {
            let quads = per_stream.remove(&stream).unwrap_or_default();
            let window = self.windows[&stream].clone();
            guarded(|| {
                // RDFStream::add_quads (rsp_engine.rs:40-47): a set of the quads, one timestamp
                let container = QuadContainer::new(quads.into_iter().collect::<HashSet<Quad>>(), t);
                // the stream thread's loop body (rsp_engine.rs:109-117)
                let mut win = window.lock().map_err(|_| Failure(format!("the window of {stream} is poisoned")))?;
                for quad in &container.elements {
                    win.add(quad.clone(), container.last_timestamp_changed);
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    /// `close_stream` on every stream, then wait until the engine's stream threads have handled it:
    /// dropping the engine closes their channels, and each thread ends (dropping its handle on its
    /// window) once it has handled everything sent before.
    fn close(self) -> Outcome<(Receiver<BindingWithTimestamp>, Option<i64>)> {
        let Stand { engine, results, windows, close_stream, last_t, widest, .. } = self;
        let Some(setting) = close_stream else { return Ok((results, None)) };
        let final_timestamp = match setting {
            Value::Number(n) => n.as_i64().ok_or_else(|| Failure(format!("close_stream: {n} is not an integer")))?,
            Value::Bool(true) => match last_t {
                Some(t) => t + widest,
                None => return Ok((results, None)),
            },
            other => return Err(Failure(format!("close_stream: expected true, false or a time in ms, got {other}"))),
        };
        let streams: Vec<String> = windows.keys().cloned().collect();
        for stream in &streams {
            engine.close_stream(stream, final_timestamp).map_err(Failure)?;
        }
        let before: Vec<(Arc<Mutex<CSPARQLWindow>>, usize)> =
            windows.values().map(|w| (w.clone(), Arc::strong_count(w))).collect();
        drop(windows);
        drop(engine); // its map of windows and its stream senders
        let deadline = Instant::now() + CLOSE_WAIT;
        // each window had: our two handles, the engine's map, its stream thread, the callbacks'
        for (window, count) in &before {
            while Arc::strong_count(window) > count - 3 {
                if Instant::now() > deadline {
                    return Err(Failure("rsp-rs did not handle the close_stream sentinel within 30 s".into()));
                }
                if window.is_poisoned() {
                    let recorded = PANIC.lock().ok().and_then(|mut p| p.take()).unwrap_or_default();
                    return Err(Failure(format!("rsp-rs panicked: {}", one_line(&recorded))));
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        Ok((results, Some(final_timestamp)))
    }
}

fn respond(output: &mut Output, results: &Receiver<BindingWithTimestamp>, id: Option<&Value>, t: Option<i64>) -> Outcome<()> {
    while let Ok(result) = results.try_recv() {
        let binding: Map<String, Value> = bindings::parse(&result.bindings)
            .map_err(|e| Failure(format!("cannot read rsp-rs's binding {:?}: {e}", result.bindings)))?
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let mut message = json!({"type": "response", "t": t, "operation": "=", "bindings": [binding],
                                 "system_time": system_time()});
        if let Some(id) = id {
            message["stimulus"] = id.clone();
        }
        output.send(&message).map_err(io_failure)?;
    }
    Ok(())
}

fn io_failure(error: io::Error) -> Failure {
    Failure(format!("cannot write to the stand: {error}"))
}

/// One host message; `Ok(false)` after `close`.
fn handle(message: &Value, stand: &mut Option<Stand>, output: &mut Output) -> Outcome<bool> {
    let kind = message.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "register" => {
            let (made, mut ready) = guarded(|| Stand::register(message))?;
            ready["type"] = json!("ready");
            ready["pid"] = json!(std::process::id());
            ready["batch"] = json!(true);
            *stand = Some(made);
            output.send(&ready).map_err(io_failure)?;
        }
        "stimulus" | "batch" => {
            let engine = stand.as_mut().ok_or_else(|| Failure(format!("{kind} before register")))?;
            let single = [message.clone()];
            let stimuli = match kind {
                "batch" => message.get("stimuli").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]),
                _ => &single[..],
            };
            for stimulus in stimuli {
                engine.push(stimulus)?;
                respond(output, &engine.results, stimulus.get("id"), stimulus.get("t").and_then(Value::as_i64))?;
                output.send(&json!({"type": "done", "stimulus": stimulus.get("id")})).map_err(io_failure)?;
                output.flush_if_due().map_err(io_failure)?;
            }
        }
        "advance" => {
            output.send(&json!({"type": "done", "advance": message.get("t")})).map_err(io_failure)?;
        }
        "close" => {
            if let Some(engine) = stand.take() {
                let (results, sentinel) = guarded(|| engine.close())?;
                respond(output, &results, None, sentinel)?;
            }
            output.send(&json!({"type": "done", "closed": true})).map_err(io_failure)?;
            return Ok(false);
        }
        other => return Err(Failure(format!("unknown message type {other:?}"))),
    }
    Ok(true)
}

fn main() {
    panic::set_hook(Box::new(|info| {
        let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let text = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let message = format!("{text}{place}");
        eprintln!("rsp-rs panicked: {message}");
        if let Ok(mut slot) = PANIC.lock() {
            *slot = Some(message);
        }
    }));
    let stdin = io::stdin();
    let mut output = Output { out: io::stdout().lock(), flushed: Instant::now() };
    let mut stand: Option<Stand> = None;
    let mut code = 0;
    for line in BufReader::new(stdin.lock()).lines() {
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                eprintln!("rspwb-rsprs: cannot read from the stand: {error}");
                code = 1;
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let outcome = serde_json::from_str::<Value>(&line)
            .map_err(|e| Failure(format!("not a JSON message: {e}")))
            .and_then(|message| handle(&message, &mut stand, &mut output));
        match outcome {
            Ok(true) => {}
            Ok(false) => break,
            Err(Failure(message)) => {
                let _ = output.send(&json!({"type": "error", "message": message, "fatal": true}));
                code = 1;
            }
        }
        if output.flush().is_err() || code != 0 {
            break;
        }
    }
    let _ = output.flush();
    std::process::exit(code);
}
