// backend.js — the one door between the page and the lab API (Go's app.Lab).
//
// The UI (lab.js) only ever calls Backend.connect() and then
//   backend.call(method, ...args)  -> Promise of the method's result; a
//                                     rejection is always {field, message}
//   backend.on(event, handler)     -> a function that unsubscribes
// so the same UI runs on any face that provides those two:
//   - the desktop window (Wails v2): methods are window.go.app.Lab.*, events
//     come through window.runtime.EventsOn;
//   - a browser or WebAssembly build: it sets window.packlabBackend to an
//     object with call(method, args) and on(event, handler) before lab.js
//     runs, and nothing here or in lab.js changes.
(function () {
  "use strict";

  // The lab API's methods, for a clear message when a face lacks one.
  const METHODS = ["Limits", "Estimate", "StartRun", "Cancel", "History", "Delete",
    "Table", "Chart", "Export", "ChooseSource", "Plan", "VerifyPlan", "Inspection", "DeleteInspection"];

  // normalizeError turns whatever a face rejects with into {field, message}.
  function normalizeError(e) {
    if (e && typeof e === "object") {
      if (typeof e.message === "string") return { field: e.field || "", message: e.message };
      try { return { field: "", message: JSON.stringify(e) }; } catch (_) { /* fall through */ }
    }
    if (typeof e === "string") {
      // Wails reports argument decoding problems as plain text.
      return { field: "", message: e };
    }
    return { field: "", message: String(e) };
  }

  function wailsLab() {
    return window.go && window.go.app && window.go.app.Lab && window.runtime ? window.go.app.Lab : null;
  }

  function wailsBackend(lab) {
    return {
      kind: "wails",
      call(method, ...args) {
        const fn = lab[method];
        if (typeof fn !== "function") {
          return Promise.reject({ field: "", message: "the desktop app has no method " + method });
        }
        return fn(...args).catch((e) => { throw normalizeError(e); });
      },
      on(event, handler) {
        return window.runtime.EventsOn(event, handler);
      },
    };
  }

  function pluggedBackend(b) {
    return {
      kind: b.kind || "browser",
      call(method, ...args) {
        return Promise.resolve()
          .then(() => b.call(method, args))
          .catch((e) => { throw normalizeError(e); });
      },
      on(event, handler) { return b.on(event, handler); },
    };
  }

  function detect() {
    const lab = wailsLab();
    if (lab) return wailsBackend(lab);
    if (window.packlabBackend && typeof window.packlabBackend.call === "function") {
      return pluggedBackend(window.packlabBackend);
    }
    return null;
  }

  // connect resolves to the backend once a face has set itself up (the
  // Wails runtime may arrive a moment after the page), or rejects after
  // timeoutMs with a message the page shows.
  function connect(timeoutMs) {
    const deadline = Date.now() + (timeoutMs || 5000);
    return new Promise((resolve, reject) => {
      (function poll() {
        const b = detect();
        if (b) return resolve(b);
        if (Date.now() > deadline) {
          return reject({ field: "", message: "no lab backend: open packlab through the desktop app (or a browser build that provides one)" });
        }
        setTimeout(poll, 25);
      })();
    });
  }

  window.Backend = { connect, normalizeError, METHODS };
})();
