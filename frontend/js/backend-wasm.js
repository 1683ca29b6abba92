// backend-wasm.js — the browser face of the lab: it plugs the WebAssembly
// build of the lab API (packlab.wasm, running in a Web Worker, see
// wasm-worker.js) into backend.js as window.packlabBackend, so that lab.js
// runs unchanged:
//   call(method, args) -> Promise of the method's result (rejects with
//                         {field, message}, as every face does)
//   on(event, handler) -> a function that unsubscribes
//
// The site that `make web` builds loads this script before backend.js (the
// desktop window never loads it). It starts the worker at once, so the
// .wasm downloads and compiles while the page draws.
//
// What the browser does differently, all of it here or in the worker:
//   - Cancel: a run holds the worker's only thread until it ends, so a
//     message could not reach it in time. Cancelling stops the worker (as
//     the desktop kills a run's worker process) and starts a fresh one;
//     results measured before the cancel were saved (IndexedDB) before their
//     run:result event was sent, so they are kept. The new worker words the
//     run's end (RunCancelled) and it goes out as the run:done event. Calls
//     still waiting in the old worker are sent again to the new one. The
//     compiled module is handed on, with the code the engine optimised.
//   - ChooseSource: the browser's file picker, here on the page; the File
//     goes to the worker, which reads it in slices as Go reads it.
//   - exports arrive as downloads.
(function () {
  "use strict";

  if (window.packlabBackend) return; // another face is already plugged in

  const workerURL = new URL("js/wasm-worker.js", document.baseURI).href;
  const handlers = new Map();   // event name -> Set of handlers
  const pending = new Map();    // call id -> {method, args, file, resolve, reject}
  let nextId = 1;
  let worker = null;
  let fatal = null;             // {field, message} once the worker cannot go on
  let run = null;               // the run going: {id, results, t0}
  let info = null;              // the worker's ready message
  let module = null;            // packlab.wasm compiled, kept for the next worker

  function emit(name, data) {
    for (const h of Array.from(handlers.get(name) || [])) {
      try { h(data); } catch (e) { console.error("packlab: a handler of " + name + " failed:", e); }
    }
  }

  function post(id, p) {
    worker.postMessage({ type: "call", id, method: p.method, args: p.args, file: p.file });
  }

  function fail(message) {
    fatal = { field: "", message };
    for (const [id, p] of pending) { pending.delete(id); p.reject(fatal); }
  }

  // crashed handles a worker that stopped by itself (its Go program ended:
  // out of memory, say). A run it held ends as failed, so the page does not
  // wait for it forever, and a fresh worker takes over, with the calls still
  // waiting; after three crashes in a minute the lab gives up and says why.
  const crashes = [];
  function crashed(message) {
    console.error("packlab:", message);
    const r = run;
    run = null;
    if (r) {
      emit("run:error", { id: r.id, field: "run", message: "the browser lab stopped during the run: " + message });
      emit("run:done", {
        id: r.id, result_ids: r.results, cancelled: false, failed: true,
        seconds: (performance.now() - r.t0) / 1000,
        message: "Failed: the browser lab stopped during the run (" + r.results.length + " layout(s) measured before it are kept)",
      });
    }
    const now = Date.now();
    while (crashes.length && now - crashes[0] > 60000) crashes.shift();
    crashes.push(now);
    worker.onmessage = null;
    worker.onerror = null;
    worker.terminate();
    if (crashes.length > 3) { fail(message); return; }
    start();
  }

  function start() {
    fatal = null;
    info = null;
    try {
      worker = new Worker(workerURL);
    } catch (e) {
      fail("the browser lab could not start its worker: " + (e && e.message || e));
      return;
    }
    worker.onmessage = (ev) => {
      const m = ev.data || {};
      switch (m.type) {
        case "module":
          module = m.module;
          break;
        case "ready":
          info = m;
          if (m.warning) console.warn("packlab:", m.warning);
          break;
        case "reply": {
          const p = pending.get(m.id);
          if (!p) return;
          pending.delete(m.id);
          if (m.error) { p.reject(m.error); return; }
          if (p.method === "StartRun" && m.result && m.result.id) {
            run = { id: m.result.id, results: [], t0: performance.now() };
          }
          p.resolve(m.result);
          break;
        }
        case "event": {
          const d = m.data || {};
          if (run && d.id === run.id) {
            if (m.name === "run:result") run.results.push(d.result_id);
            if (m.name === "run:done") run = null;
          }
          emit(m.name, d);
          break;
        }
        case "download":
          download(m.name, m.mime, m.bytes);
          break;
        case "fatal":
          if (info) crashed(m.message); else fail(m.message); // it never started: starting again will not help
          break;
      }
    };
    worker.onerror = (ev) => {
      ev.preventDefault();
      const message = "the browser lab stopped: " + (ev.message || "an error in its worker");
      if (info) crashed(message); else fail(message);
    };
    worker.postMessage({ type: "init", module });
    for (const [id, p] of pending) post(id, p);
  }

  function call(method, args, file) {
    if (fatal) return Promise.reject(fatal);
    return new Promise((resolve, reject) => {
      const id = nextId++;
      const p = { method, args: args || [], file, resolve, reject };
      pending.set(id, p);
      post(id, p);
    });
  }

  // cancel stops the worker that holds run r and words the run's end in a
  // fresh one.
  async function cancel(r) {
    run = null;
    worker.onmessage = null;
    worker.onerror = null;
    worker.terminate();
    const seconds = (performance.now() - r.t0) / 1000;
    start();
    let done;
    try {
      done = await call("RunCancelled", [r.id, r.results, seconds]);
    } catch (e) {
      // The new worker did not start: end the run all the same.
      done = { id: r.id, result_ids: r.results, cancelled: true, failed: false, seconds,
        message: "Cancelled; the browser lab could not start again: " + (e && e.message || e) };
    }
    emit("run:done", done);
    return { id: r.id };
  }

  function download(name, mime, bytes) {
    const url = URL.createObjectURL(new Blob([bytes], { type: mime }));
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    a.style.display = "none";
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }

  // pickFile shows the browser's file picker; it resolves to the File, or
  // null when the person closes it.
  function pickFile() {
    return new Promise((resolve) => {
      const input = document.createElement("input");
      input.type = "file";
      input.accept = ".tsv,.csv,.gz,.txt,text/csv,text/tab-separated-values";
      input.style.display = "none";
      let settled = false;
      const settle = (f) => { if (!settled) { settled = true; input.remove(); resolve(f); } };
      input.addEventListener("change", () => settle(input.files && input.files[0] || null));
      input.addEventListener("cancel", () => settle(null));
      document.body.append(input);
      input.click();
    });
  }

  window.packlabBackend = {
    kind: "browser",
    call(method, args) {
      args = args || [];
      if (method === "Cancel" && run && args[0] === run.id) return cancel(run);
      if (method === "ChooseSource") return pickFile().then((file) => call(method, args, file));
      return call(method, args);
    },
    on(event, handler) {
      if (!handlers.has(event)) handlers.set(event, new Set());
      handlers.get(event).add(handler);
      return () => handlers.get(event).delete(handler);
    },
    // info is the worker's ready message ({resultsDir, persistent, warning}),
    // or null before the lab has started.
    info() { return info; },
  };

  start();
})();
