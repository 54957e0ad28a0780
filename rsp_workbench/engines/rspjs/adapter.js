'use strict';
/**
 * RSP-JS (npm `rsp-js`, pinned in package-lock.json) on the RSP Workbench test stand.
 *
 * This adapter only translates messages:
 *
 *   register  -> `new RSPEngine(query.text)` (the stand sends the query in the `rspjs`
 *                dialect), static triples -> `addStaticData`, `register()` for the output
 *   stimulus  -> `getStream(iri).add(quad, t)` for each element, in order, then wait until
 *                every evaluation the engine started has delivered its last binding
 *   RStream   -> one `response` per binding event the engine emits, `t` = the application
 *                time of the stimulus during which the engine evaluated
 *   advance   -> nothing: RSP-JS has no notion of time passing without data
 *   close     -> wait for running evaluations, `done`
 *
 * The only thing it observes inside the engine is when an evaluation ends (to send
 * `done` after the engine's last answer to a stimulus): it keeps a count of the running
 * `r2r.execute` calls and listens for each result iterator's `end`. It changes no
 * argument, result or state of the engine. The engine's console output (it logs every
 * element) goes to stderr with `parameters.log: stderr`; by default it is discarded
 * (stdout belongs to the protocol). See README.md for the semantics this yields.
 */
const path = require('path');
const { serve, EngineError, parseTerm, termToNT } = require(path.join(__dirname, '..', 'kit', 'node', 'rspwb-kit.js'));

class RSPJSAdapter {
  constructor() {
    this.rsp = null;
    this.now = null; // application time of the stimulus being handled
    this.running = 0; // evaluations started and not ended
    this.waiting = [];
    this.emitResponse = null;
  }

  register(message, emit) {
    const { RSPEngine } = require('rsp-js');
    const N3 = require('n3');
    this.factory = N3.DataFactory;
    const query = message.query || {};
    this.rsp = new RSPEngine(query.text || '');
    const streams = this.rsp.get_all_streams();
    if (streams.length === 0) {
      throw new EngineError('RSP-JS found no window in the query: it reads lines '
        + '`FROM NAMED WINDOW <w> ON STREAM <s> [RANGE n STEP n]` (the rspjs dialect: '
        + '`rspwb query translate FILE --to rspjs`)');
    }
    this.defaultStream = streams[0];
    const { quad, namedNode, defaultGraph } = this.factory;
    const staticData = message.static || {};
    for (const [s, p, o] of staticData.default || []) {
      this.rsp.addStaticData(quad(this.term(s), this.term(p), this.term(o), defaultGraph()));
    }
    for (const [graph, triples] of Object.entries(staticData.named || {})) {
      for (const [s, p, o] of triples) {
        this.rsp.addStaticData(quad(this.term(s), this.term(p), this.term(o), namedNode(graph)));
      }
    }
    this.observeEvaluations();
    const output = this.rsp.register();
    output.on('RStream', (answer) => {
      const binding = {};
      for (const [variable, term] of answer.bindings) binding[variable.value] = termToNT(term);
      emit([binding], { t: this.now, operation: '=' });
    });
    return { engine: 'rsp-js', version: require('rsp-js/package.json').version, streams };
  }

  /** Count running evaluations: one per `r2r.execute` call, ended by its iterator's `end`. */
  observeEvaluations() {
    const r2r = this.rsp.r2r;
    const execute = r2r.execute.bind(r2r);
    r2r.execute = (container) => {
      this.running += 1;
      const result = execute(container);
      result.then((iterator) => iterator.once('end', () => this.ended()), () => this.ended());
      return result;
    };
  }

  ended() {
    this.running -= 1;
    if (this.running === 0) setImmediate(() => this.wake());
  }

  wake() {
    if (this.running !== 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }

  idle() {
    if (this.running === 0) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  term(text) {
    return parseTerm(text, this.factory);
  }

  async push(stimulus) {
    const { quad, defaultGraph } = this.factory;
    this.now = stimulus.t;
    const streams = stimulus.streams;
    stimulus.elements.forEach((element, index) => {
      const stream = this.rsp.getStream(streams ? streams[index] : this.defaultStream);
      if (!stream) return; // an element of a stream the query has no window over
      stream.add(quad(this.term(element[0]), this.term(element[1]), this.term(element[2]), defaultGraph()), stimulus.t);
    });
    await this.idle();
  }

  async close() {
    await this.idle();
  }
}

serve(new RSPJSAdapter(), {
  log: (register) => (((register.engine || {}).parameters || {}).log === 'stderr' ? 'stderr' : 'discard'),
});
