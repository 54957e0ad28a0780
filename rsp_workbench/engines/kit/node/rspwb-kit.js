'use strict';
/**
 * The Node.js wrapping kit: put an RSP engine written in JavaScript on the RSP Workbench
 * test stand by writing `register`, `push` and `close` (docs/engine-protocol.md).
 *
 * `serve(engine)` speaks the JSON-lines protocol on stdin/stdout: it answers `ready` and
 * every `done`, hands messages to the engine one at a time (awaiting async methods, so a
 * `done` is sent only when the engine has finished), attributes each `emit`-ted response
 * to the stimulus being handled, stamps `system_time`, and turns a thrown error into a
 * fatal `error` message. stdout carries protocol lines only: whatever else is written
 * there (console.log of the engine) goes to stderr, or nowhere with {log: 'discard'}.
 * It announces `"batch": true` in `ready`: the stand may then send several stimuli in one
 * `batch` line, which the kit hands to `push` one by one (the engine sees no difference),
 * answering one `done` each; during a batch the protocol lines are written together at its
 * end and at least every millisecond (FLUSH_PERIOD_MS), not one write per line.
 *
 * No dependencies. Terms are N-Triples text on the wire; `parseTerm` / `termToNT` convert
 * to and from RDF/JS terms of any DataFactory (n3, rdf-data-factory, …).
 */
const readline = require('readline');
const { performance } = require('perf_hooks');

const FLUSH_PERIOD_MS = 1; // in a batch, written `done`s reach the stand at least this often

class EngineError extends Error {}

/** Reserve stdout for the protocol; returns the function that writes protocol text. */
function reserveStdout(log) {
  const out = process.stdout;
  const writeProtocol = out.write.bind(out);
  const elsewhere = log === 'discard'
    ? (chunk, encoding, callback) => {
        const done = typeof encoding === 'function' ? encoding : callback;
        if (done) process.nextTick(done);
        return true;
      }
    : process.stderr.write.bind(process.stderr);
  out.write = elsewhere; // console.log, console.debug, … and direct writes
  return writeProtocol;
}

/**
 * Run the protocol loop. `engine` has async-or-not methods:
 *   register({query, engine, static}, emit) -> extra `ready` fields (throw EngineError to refuse)
 *   push({id, t, elements, streams}, emit)
 *   advance(t, emit)        (optional)
 *   close(emit)             (optional)
 * `emit(bindings, {t, operation})` sends one response; bindings = [{var: N-Triples term}].
 * `options.log`: 'stderr' (default) or 'discard' for what the engine writes to stdout;
 * a function(registerMessage) may decide it from the register message.
 */
function serve(engine, options = {}) {
  let send = null;
  let current = null; // id of the stimulus being handled, null for advance/close
  let registered = false;
  let chain = Promise.resolve();
  let held = null; // protocol lines held during a batch (null: write each line at once)
  const flush = () => {
    if (held && held.length) {
      const text = held.join('');
      held = [];
      send(text);
    }
  };
  const sendMessage = (message) => {
    const line = JSON.stringify(message) + '\n';
    if (held) held.push(line);
    else send(line);
  };
  const emit = (bindings, { t = null, operation = '=' } = {}) => {
    sendMessage({ type: 'response', stimulus: current, t, operation, bindings, system_time: Date.now() });
  };
  const finish = (code) => {
    process.exitCode = code;
    setImmediate(() => process.exit(code));
  };
  const fail = (error, code) => {
    if (!(error instanceof EngineError)) process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
    const text = error instanceof EngineError ? error.message : `${error && error.name ? error.name + ': ' : ''}${error && error.message ? error.message : error}`;
    if (!send) send = reserveStdout('stderr');
    flush();
    held = null;
    sendMessage({ type: 'error', message: text, fatal: true });
    finish(code);
  };
  const handle = async (message) => {
    switch (message.type) {
      case 'register': {
        if (!send) {
          const log = typeof options.log === 'function' ? options.log(message) : options.log;
          send = reserveStdout(log);
        }
        try {
          const info = await engine.register(message, emit);
          registered = true;
          sendMessage({ type: 'ready', pid: process.pid, batch: true, ...(info || {}) });
        } catch (error) {
          fail(error, 2);
          return false;
        }
        return true;
      }
      case 'stimulus':
        current = message.id;
        await engine.push(message, emit);
        sendMessage({ type: 'done', stimulus: message.id });
        return true;
      case 'batch': {
        held = [];
        let flushed = performance.now();
        try {
          for (const item of message.stimuli) {
            current = item.id;
            await engine.push(item, emit);
            sendMessage({ type: 'done', stimulus: item.id });
            if (performance.now() - flushed >= FLUSH_PERIOD_MS) {
              flush();
              flushed = performance.now();
            }
          }
        } finally {
          flush(); // what was done before a failure reaches the stand before the error
          held = null;
        }
        return true;
      }
      case 'advance':
        current = null;
        if (engine.advance) await engine.advance(message.t, emit);
        sendMessage({ type: 'done', advance: message.t });
        return true;
      case 'close':
        current = null;
        if (engine.close) await engine.close(emit);
        sendMessage({ type: 'done', closed: true });
        finish(0);
        return false;
      default:
        throw new EngineError(`unknown message type ${JSON.stringify(message.type)}`);
    }
  };
  let stopped = false;
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    chain = chain.then(async () => {
      if (stopped) return;
      const message = JSON.parse(line);
      if (!registered && message.type !== 'register') throw new EngineError(`expected register first, got ${message.type}`);
      if (!(await handle(message))) stopped = true;
    }).catch((error) => {
      stopped = true;
      fail(error, error instanceof EngineError ? 2 : 1);
    });
  });
  lines.on('close', () => { chain.then(() => { if (!stopped) finish(0); }); });
}

// ---------------------------------------------------------------------------- terms

const ESCAPES = { t: '\t', b: '\b', n: '\n', r: '\r', f: '\f', '"': '"', "'": "'", '\\': '\\' };

function unescape(text) {
  return text.replace(/\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))/g, (_, u4, u8, c) => {
    if (u4 || u8) return String.fromCodePoint(parseInt(u4 || u8, 16));
    return c in ESCAPES ? ESCAPES[c] : c;
  });
}

/** An N-Triples term (`<iri>`, `_:b`, `"lex"`, `"lex"@en`, `"lex"^^<dt>`) as an RDF/JS term. */
function parseTerm(text, factory) {
  if (text.startsWith('<')) return factory.namedNode(unescape(text.slice(1, -1)));
  if (text.startsWith('_:')) return factory.blankNode(text.slice(2));
  const match = /^"((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9-]+)|\^\^<([^>]*)>)?$/s.exec(text);
  if (!match) throw new EngineError(`not an N-Triples term: ${text}`);
  const lexical = unescape(match[1]);
  if (match[2]) return factory.literal(lexical, match[2]);
  if (match[3]) return factory.literal(lexical, factory.namedNode(match[3]));
  return factory.literal(lexical);
}

const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';

function escapeLiteral(text) {
  return text.replace(/[\\"\n\r\t\b\f]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' })[c]);
}

/** An RDF/JS term as N-Triples text (plain literals for xsd:string, as the workbench writes them). */
function termToNT(term) {
  switch (term.termType) {
    case 'NamedNode': return `<${term.value}>`;
    case 'BlankNode': return `_:${term.value}`;
    case 'Literal': {
      const lexical = `"${escapeLiteral(term.value)}"`;
      if (term.language) return `${lexical}@${term.language}`;
      const datatype = term.datatype && term.datatype.value;
      if (!datatype || datatype === XSD_STRING || datatype === RDF_LANG_STRING) return lexical;
      return `${lexical}^^<${datatype}>`;
    }
    default: throw new EngineError(`cannot write a ${term.termType} term as N-Triples`);
  }
}

module.exports = { serve, EngineError, parseTerm, termToNT };
