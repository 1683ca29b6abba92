// lab.js — the lab's page. It sends the form as typed to the Go API, shows
// what comes back, and renders the ECharts options Go builds. It computes no
// figure: every number, label, percentage and chart option comes from Go.
(function () {
  "use strict";

  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids) if (kid !== null && kid !== undefined) e.append(kid);
    return e;
  };

  const state = {
    backend: null,
    limits: null,
    sourceMode: "synthetic",
    selection: [],        // result ids on the Comparison view
    chartKind: "",
    chartView: null,      // the last chart Go built: {kind, title, option, empty, note}
    chart: null,          // the ECharts instance
    planChart: null,      // the Plan tab's ECharts instances: memory against rows,
    frontChart: null,     // and the front of memory against speed
    runId: "",
    runResults: [],
    historySelected: new Set(), // result ids picked in History, and the job ids of inspections
    historyOpen: new Set(),     // job ids whose results History shows
    history: null,              // the last History read: clicks redraw it, runs and deletes read it again
    estimateSeq: 0,
    estimateOK: false,
  };

  // ---- errors next to what they concern ----

  // showError puts err ({field, message}) next to its field, or into the
  // fallback slot (an action such as "run" or "export") when the field is
  // not on the page. It never swallows an error.
  function showError(err, fallback) {
    const e = Backend.normalizeError(err);
    let slot = e.field ? $(`[data-error-for="${e.field}"]`) : null;
    if (slot) {
      const input = document.getElementById(e.field);
      if (input) input.classList.add("invalid");
    } else {
      slot = $(`[data-error-for="${fallback}"]`) || $("#banner");
    }
    slot.textContent = e.message;
    return e;
  }

  // clearErrors empties the error slots of a form ("form", "plan-form"), or
  // the one slot of an action ("chart", "export", ...), and unmarks their
  // inputs.
  function clearErrors(scope) {
    const fields = scope === "form" || scope === "plan-form" || scope === "ch-form"
      ? $$(`#${scope} [data-error-for]`)
      : $$(`[data-error-for="${scope}"]`);
    for (const s of fields) {
      s.textContent = "";
      const input = document.getElementById(s.dataset.errorFor);
      if (input) input.classList.remove("invalid");
    }
  }

  // ---- the form ----

  function buildForm(limits) {
    const d = limits.defaults;
    drawLayouts(limits, new Set(d.layouts));
    // Folded away so that Run and the main choices stay in view; open when
    // one of them is chosen already.
    $("#more-layouts").open = limits.layouts.some((l) => (l.reference || l.clickhouse_own) && d.layouts.includes(l.name));
    buildFormFields(limits);
  }

  // drawLayouts draws every layout's chip, ticked where checked has it:
  // packlab's layouts, then the C++ reference maps, then ClickHouse's own
  // dictionaries, listed even where they cannot run, with why, the command
  // that builds them, and a link that checks again.
  function drawLayouts(limits, checked) {
    const chip = (l) =>
      el("label", { class: "chip" + (l.reference ? " ref" : "") + (l.clickhouse_own ? " ch" : ""), title: l.available ? l.description : l.unavailable },
        el("input", { type: "checkbox", name: "layouts", value: l.name, checked: l.available && checked.has(l.name), disabled: !l.available }),
        el("span", {}, l.name, el("small", { text: l.clickhouse_label })));
    const refs = limits.layouts.filter((l) => l.reference);
    const chs = limits.layouts.filter((l) => l.clickhouse_own);
    $("#layouts").replaceChildren(...limits.layouts.filter((l) => !l.reference && !l.clickhouse_own).map(chip));
    $("#ref-layouts").replaceChildren(...refs.map(chip));
    $("#ch-layouts").replaceChildren(...chs.map(chip));
    // Where a worker can be built (not in the browser), "check again"
    // finds it without a restart; so does the window gaining focus.
    const again = () => el("button", { type: "button", class: "link check-again", text: "check again", onclick: recheckWorkers });
    const note = $("#refs-note");
    const refsOK = limits.references.available;
    note.replaceChildren(limits.references.note, ...(refsOK || limits.runtime === "browser" ? [] : [" ", again()]));
    note.classList.toggle("unavailable", !refsOK);
    const chNote = $("#ch-note");
    const chOK = !!(limits.clickhouse && limits.clickhouse.available);
    chNote.replaceChildren(limits.clickhouse ? limits.clickhouse.note : "", ...(chOK || limits.runtime === "browser" ? [] : [" ", again()]));
    chNote.classList.toggle("unavailable", !chOK);
  }

  // recheckWorkers asks for the layouts again (a worker built since, say
  // by make chdb, runs now) and redraws their chips when anything changed,
  // keeping what is ticked.
  async function recheckWorkers() {
    let l;
    try {
      l = await state.backend.call("Limits");
    } catch (err) {
      return; // the form stays as it was; the next check may answer
    }
    const key = (x) => JSON.stringify([x.layouts.map((y) => [y.name, y.available, y.unavailable, y.description]), x.references, x.clickhouse]);
    if (key(l) === key(state.limits)) return;
    const checked = new Set(readForm().layouts);
    Object.assign(state.limits, { layouts: l.layouts, references: l.references, clickhouse: l.clickhouse });
    drawLayouts(state.limits, checked);
    scheduleEstimate();
  }

  function buildFormFields(limits) {
    const d = limits.defaults;

    // The key may also be a String or a tuple (limits.key_types), which
    // only the ch_complex_key_ layouts hold: Go says so beside the field.
    for (const [id, types] of [["key", limits.key_types || limits.types], ["value", limits.types]]) {
      $("#" + id).replaceChildren(...types.map((t) =>
        el("option", { value: t.name, text: t.label, selected: t.name === d[id] })));
    }
    $("#attr_add").onclick = () => addAttribute("#attrs", limits, "UInt32");
    $("#rows").value = d.rows;
    const sh = $("#shards");
    sh.min = limits.shards.min; sh.max = limits.shards.max; sh.value = d.shards;
    $("#shards-hint").textContent = `${limits.shards.min}–${limits.shards.max}`;
    const mlf = $("#max_load_factor");
    mlf.min = limits.max_load_factor.min; mlf.max = limits.max_load_factor.max;
    mlf.step = limits.max_load_factor.step;
    mlf.value = d.max_load_factor || limits.max_load_factor.default;
    $("#mlf-default-text").textContent = limits.max_load_factor_default;
    $("#mlf_default").checked = !d.max_load_factor;
    syncMLF();
    $("#keys").replaceChildren(...limits.key_sources.map((k) =>
      el("option", { value: k.kind, text: k.label, selected: k.kind === d.keys })));
    syncKeysParam(true);
    $("#seed").value = d.seed;
    const rep = $("#repeats");
    rep.min = limits.repeats.min; rep.max = limits.repeats.max; rep.value = d.repeats;
    $("#miss_rate").value = d.miss_rate;
    $("#huge_pages").checked = d.huge_pages !== "off";
    $("#preallocate").checked = !!d.preallocate;
    $("#settle").value = d.settle || "0";
    $("#memory_row").hidden = !limits.huge_pages_supported; // huge pages and the idle: native Linux only, none in the browser
    $("#header").value = d.header || "auto";
  }

  // syncMLF greys the slider out while each layout's own max load factor
  // is chosen (the form then sends "").
  function syncMLF() {
    const own = $("#mlf_default").checked;
    $("#max_load_factor").disabled = own;
    $("#mlf-out").textContent = own ? "–" : $("#max_load_factor").value;
  }

  // syncKeysParam shows the parameter box for range:M and zipf:S.
  function syncKeysParam(useDefault) {
    const kind = $("#keys").value;
    const ks = state.limits.key_sources.find((k) => k.kind === kind) || {};
    const p = $("#keys_param");
    p.hidden = !ks.param;
    p.placeholder = ks.param ? ks.param : "";
    p.title = ks.param_hint || "";
    if (ks.param && (useDefault || !p.value)) p.value = ks.param_default || "";
    if (!ks.param) p.value = "";
  }

  function setSourceMode(mode) {
    state.sourceMode = mode;
    for (const b of $$("#source-mode button")) b.classList.toggle("on", b.dataset.mode === mode);
    $("#synthetic-source").hidden = mode !== "synthetic";
    $("#file-source").hidden = mode !== "file";
    $("#rows").disabled = mode === "file"; // a file gives all its rows
  }

  // readForm returns the form exactly as typed; Go parses and validates it.
  function readForm() {
    const file = state.sourceMode === "file";
    return {
      source_kind: state.sourceMode,
      // Every chip group the form draws (packlab's, the C++ maps,
      // ClickHouse's own): the chips, not their groups, are the field.
      layouts: $$('#form input[name="layouts"]:checked').map((i) => i.value),
      key: $("#key").value,
      value: $("#value").value,
      attributes: attributesOf("#attrs", "#value"),
      rows: $("#rows").value,
      shards: $("#shards").value,
      max_load_factor: $("#mlf_default").checked ? "" : $("#max_load_factor").value,
      keys: file ? "" : $("#keys").value,
      keys_param: file ? "" : $("#keys_param").value,
      source: file ? $("#source").value : "",
      header: file ? $("#header").value : "",
      key_column: file ? $("#key_column").value : "",
      value_column: file ? $("#value_column").value : "",
      columns: file ? $("#columns").value : "",
      skip_bad_rows: file ? $("#skip_bad_rows").checked : false,
      seed: $("#seed").value,
      repeats: $("#repeats").value,
      miss_rate: $("#miss_rate").value,
      no_read: $("#no_read").checked,
      huge_pages: $("#huge_pages").checked ? "on" : "off",
      preallocate: $("#preallocate").checked,
      settle: $("#settle").value,
    };
  }

  // ---- the prediction before Run ----

  let estimateTimer = 0;
  function scheduleEstimate() {
    clearTimeout(estimateTimer);
    estimateTimer = setTimeout(estimate, 200);
  }

  async function estimate() {
    const seq = ++state.estimateSeq;
    try {
      const est = await state.backend.call("Estimate", readForm());
      if (seq !== state.estimateSeq) return;
      clearErrors("form");
      renderEstimate(est);
    } catch (err) {
      if (seq !== state.estimateSeq) return;
      clearErrors("form");
      const e = showError(err, "run");
      state.estimateOK = false;
      const box = $("#estimate");
      box.className = "estimate refused";
      box.replaceChildren(el("div", { class: "verdict", text: "Check the form" }),
        el("div", { class: "message", text: e.message, title: e.message }));
      syncRunButtons();
    }
  }

  function renderEstimate(est) {
    state.estimateOK = est.fits;
    const box = $("#estimate");
    box.className = "estimate " + (est.fits ? "fits" : "refused");
    const rows = est.layouts.map((l) =>
      el("div", { class: "est-row", title: l.note || "" },
        el("span", { class: "name", text: l.layout }),
        el("div", { class: "meter" }, el("i", { class: l.fits ? "" : "over", style: `width:${l.bar_percent}%` })),
        el("span", { class: "bytes", text: l.peak_text })));
    box.replaceChildren(
      el("div", { class: "verdict", text: est.verdict }),
      ...rows,
      el("div", { class: "message", text: est.message, title: est.message }));
    syncRunButtons();
  }

  // ---- running ----

  function running() { return state.runId !== ""; }

  function syncRunButtons() {
    $("#run").disabled = running() || !state.estimateOK;
    $("#cancel").disabled = !running();
    document.body.dataset.run = running() ? "running" : "idle";
  }

  async function startRun(ev) {
    ev.preventDefault();
    if (running()) return;
    clearErrors("form");
    try {
      const started = await state.backend.call("StartRun", readForm());
      state.runId = started.id;
      state.runResults = [];
      openProgress(started.title);
    } catch (err) {
      showError(err, "run");
    }
  }

  // openProgress shows the progress card for a measurement starting (a run,
  // or the Plan tab's calibration: state.runId is set), closeProgress ends it.
  function openProgress(title) {
    $("#progress").hidden = false;
    $("#progress").classList.remove("compact", "bad");
    $("#progress-title").textContent = title;
    $("#progress-phase").textContent = "starting";
    $("#progress-bar").style.width = "0%";
    for (const id of ["p-rows", "p-rate", "p-eta", "p-rss", "p-layout"]) setStat(id, "–");
    syncRunButtons();
    // Run pressed while the comparison is scrolled down: the card comes
    // into view.
    $("#progress").scrollIntoView({ block: "nearest" });
  }

  // setStat shows a progress figure, whole in its title where it is cut.
  function setStat(id, text) {
    const e = $("#" + id);
    e.textContent = text;
    e.title = text;
  }

  function closeProgress(title, phase, bad) {
    state.runId = "";
    $("#progress-title").textContent = title;
    $("#progress-phase").textContent = phase;
    $("#progress").classList.add("compact");
    $("#progress").classList.toggle("bad", bad);
    syncRunButtons();
    loadHistory();
    scheduleEstimate(); // free memory has changed
  }

  async function cancelRun() {
    if (!running()) return;
    clearErrors("cancel");
    $("#cancel").disabled = true;
    $("#progress-phase").textContent = "cancelling…";
    try {
      await state.backend.call("Cancel", state.runId);
    } catch (err) {
      showError(err, "cancel");
      syncRunButtons();
    }
  }

  function onProgress(p) {
    if (p.id !== state.runId) return;
    $("#progress-bar").style.width = p.percent + "%";
    setStat("p-rows", p.rows_text);
    setStat("p-rate", p.rate_text);
    setStat("p-eta", p.eta_text);
    setStat("p-rss", p.rss_text);
    setStat("p-layout", p.layout_text);
    $("#progress-phase").textContent = p.phase_text;
  }

  function onResult(r) {
    if (r.id !== state.runId) return;
    state.runResults.push(r.result_id);
    setSelection(state.runResults.slice());
  }

  function onRunError(e) {
    if (e.id !== state.runId) return;
    showError(e, "run");
  }

  function onDone(d) {
    if (d.id !== state.runId) return;
    closeProgress(d.cancelled ? "Cancelled" : (d.failed ? "Failed" : "Finished"), d.message, d.cancelled || d.failed);
    if (d.result_ids && d.result_ids.length) setSelection(d.result_ids);
  }

  // ---- the comparison: table and charts ----

  function setSelection(ids) {
    state.selection = ids;
    $("#sel-count").textContent = ids.length ? String(ids.length) : "";
    showView("results");
    renderTable();
    renderChart(state.chartKind);
  }

  // figureCell is a table's cell; a figure with its range, "0.063
  // (0.061–0.070)", may break before the range (and nowhere else), so that
  // a table of repeated runs keeps its columns in its card at 1280 px.
  function figureCell(text, numeric) {
    const m = numeric && /^(\S+(?: \S+)?) (\(.+\))$/.exec(text);
    if (!m) return el("td", { class: numeric ? "num" : "", text });
    return el("td", { class: "num split" }, el("span", { text: m[1] }), " ", el("span", { text: m[2] }));
  }

  function gridTable(table, opts) {
    opts = opts || {};
    if (!table.rows.length) return el("div", { class: "empty", text: opts.empty || "Nothing to show." });
    const head = el("tr", {},
      opts.selectable ? el("th", {}, el("input", {
        type: "checkbox", "aria-label": "select all", checked: table.rows.every((r) => opts.selected.has(r.id)),
        onchange: (e) => opts.onToggleAll(e.target.checked),
      })) : null,
      ...table.columns.map((c) => el("th", { class: c.numeric ? "num" : "", text: c.name })));
    const body = table.rows.map((r) => el("tr", { "data-id": r.id, class: [opts.rowClass, opts.selectable && opts.selected.has(r.id) ? "selected" : ""].filter(Boolean).join(" ") },
      opts.selectable ? el("td", {}, el("input", {
        type: "checkbox", checked: opts.selected.has(r.id), "aria-label": "select " + r.id,
        onchange: (e) => opts.onToggle(r.id, e.target.checked),
      })) : null,
      ...r.cells.map((c, i) => figureCell(c, table.columns[i].numeric))));
    return el("table", { class: "grid", id: opts.id }, el("thead", {}, head), el("tbody", {}, ...body));
  }

  async function renderTable() {
    const wrap = $("#results-table");
    if (!state.selection.length) {
      $("#results-notes").replaceChildren();
      wrap.replaceChildren(el("div", { class: "empty", text: "Run a comparison, or pick earlier runs in History." }));
      $("#results-desc").textContent = "";
      return;
    }
    try {
      const t = await state.backend.call("Table", state.selection);
      // The notes fold under one line, so that the first chart stays in
      // view after a run.
      const notes = t.notes || [];
      wrap.replaceChildren(gridTable(t, { id: "results-grid" }));
      $("#results-notes").replaceChildren(...(notes.length ? [el("details", { class: "table-notes", id: "results-notes-list" },
        el("summary", { title: notes[0], text: `${notes.length} note${notes.length > 1 ? "s" : ""}: ${notes[0]}` }),
        ...notes.map((n) => el("p", { class: "table-note", text: n })))] : []));
      $("#results-desc").textContent = t.title || "";
    } catch (err) {
      wrap.replaceChildren(el("div", { class: "empty", text: "" }));
      showError(err, "export");
    }
  }

  function buildChartTabs(kinds) {
    $("#charttabs").replaceChildren(...kinds.map((k) =>
      el("button", { type: "button", "data-kind": k.kind, text: k.title, onclick: () => renderChart(k.kind) })));
    state.chartKind = kinds.length ? kinds[0].kind : "";
  }

  let chartSeq = 0;
  // chartNote shows note where a chart would be, clearing the chart if any.
  function chartNote(chart, empty, note) {
    if (chart) chart.clear();
    empty.hidden = false;
    empty.textContent = note;
  }

  // chartIn is the ECharts instance kept in state[key], made on first use
  // in box and resized with the window.
  function chartIn(key, box) {
    if (!state[key]) {
      const chart = echarts.init(box, null, { renderer: "canvas" });
      window.addEventListener("resize", () => chart.resize());
      state[key] = chart;
    }
    return state[key];
  }

  async function renderChart(kind) {
    state.chartKind = kind;
    for (const b of $$("#charttabs button")) b.classList.toggle("on", b.dataset.kind === kind);
    clearErrors("chart");
    $("#chart-note").textContent = "";
    const box = $("#chart");
    const empty = $("#chart-empty");
    box.dataset.kind = "";
    const seq = ++chartSeq;
    if (!state.selection.length) {
      state.chartView = null;
      chartNote(state.chart, empty, "Charts appear here after a run.");
      return;
    }
    let view;
    try {
      view = await state.backend.call("Chart", kind, state.selection);
    } catch (err) {
      if (seq === chartSeq) showError(err, "chart");
      return;
    }
    if (seq !== chartSeq) return;
    state.chartView = view;
    $("#chart-title").textContent = view.title || "Charts";
    if (view.empty) {
      chartNote(state.chart, empty, view.note);
      box.dataset.kind = kind;
      box.dataset.empty = "true";
      return;
    }
    empty.hidden = true;
    const chart = chartIn("chart", box);
    chart.off("finished");
    chart.on("finished", () => {
      if (seq === chartSeq) { box.dataset.kind = kind; box.dataset.empty = "false"; }
    });
    chart.setOption(view.option, true);
  }

  // ---- export ----

  function exportNote(slot, res) {
    $(slot).textContent = res.cancelled ? "" : res.message;
  }

  async function exportTable(what) {
    clearErrors("export");
    $("#export-note").textContent = "";
    const req = {
      report: { what: "report", format: "html" },
      markdown: { what: "table", format: "markdown" },
      csv: { what: "table", format: "csv" },
      json: { what: "results", format: "json" },
    }[what];
    try {
      const res = await state.backend.call("Export", Object.assign({ ids: state.selection }, req));
      exportNote("#export-note", res);
    } catch (err) {
      showError(err, "export");
    }
  }

  // chartData renders the current chart as PNG (a data URL from the canvas)
  // or SVG (ECharts' SVG renderer, run off-screen on the same option).
  function chartData(format) {
    if (format === "png") {
      return state.chart.getDataURL({ type: "png", pixelRatio: 2, backgroundColor: "#ffffff" });
    }
    const box = $("#chart");
    const svg = echarts.init(null, null, { renderer: "svg", ssr: true, width: box.clientWidth, height: box.clientHeight });
    try {
      svg.setOption(Object.assign({}, state.chartView.option, { animation: false, backgroundColor: "#ffffff" }));
      return svg.renderToSVGString();
    } finally {
      svg.dispose();
    }
  }

  async function exportChart(format) {
    clearErrors("chart");
    $("#chart-note").textContent = "";
    const v = state.chartView;
    if (!v || v.empty || !state.chart) {
      showError({ field: "chart", message: "no chart to export: run a comparison or pick results in History first" }, "chart");
      return;
    }
    try {
      const res = await state.backend.call("Export", {
        what: "chart", format, kind: v.kind, ids: state.selection, data: chartData(format),
      });
      exportNote("#chart-note", res);
    } catch (err) {
      showError(err, "chart");
    }
  }

  // ---- history: jobs, each opening to its results ----

  // loadHistory reads the saved results again (after a run, a delete, on
  // opening the view); renderHistory redraws the last read, which is all a
  // click on a checkbox or an arrow needs.
  async function loadHistory() {
    try {
      state.history = await state.backend.call("History");
    } catch (err) {
      showError(err, "history");
      return;
    }
    renderHistory();
  }

  function renderHistory() {
    const h = state.history;
    if (!h) return;
    const ids = new Set();
    const jobs = new Set();
    for (const j of h.jobs) { jobs.add(j.id); if (j.inspection) ids.add(j.id); for (const r of j.rows) ids.add(r.id); }
    for (const id of Array.from(state.historySelected)) if (!ids.has(id)) state.historySelected.delete(id);
    for (const id of Array.from(state.historyOpen)) if (!jobs.has(id)) state.historyOpen.delete(id);
    $("#hist-count").textContent = h.jobs.length ? String(h.jobs.length) : "";
    $("#history-problems").textContent = h.problems.length
      ? `${h.problems.length} file(s) in ${h.dir} could not be read: ${h.problems.join("; ")}` : "";
    $("#history-table").replaceChildren(historyTable(h));
    $("#hist-clear").disabled = !h.jobs.length;
    syncHistoryButtons();
  }

  // clearHistory deletes every saved result of the folder, after a second
  // click (as 'packlab history clear' asks first).
  async function clearHistory() {
    const btn = $("#hist-clear");
    const h = state.history;
    const ids = h ? h.jobs.flatMap(jobIds) : [];
    if (!ids.length) return;
    if (!btn.classList.contains("armed")) {
      btn.classList.add("armed");
      btn.textContent = `Delete all ${ids.length} — sure?`;
      setTimeout(() => { btn.classList.remove("armed"); btn.textContent = "Clear history"; }, 4000);
      return;
    }
    btn.classList.remove("armed");
    btn.textContent = "Clear history";
    deleteResults(ids);
  }

  // historyTable is one row per job (newest first, by the time it started,
  // the time shown); a job's checkbox picks all its results, its arrow shows
  // them, each with a checkbox of its own.
  // jobIds is what deleting a job deletes: its results' ids, or an
  // inspection's job id.
  function jobIds(j) { return j.inspection ? [j.id] : j.rows.map((r) => r.id); }

  // inspectionIds are the job ids of the saved inspections in History.
  function inspectionIds() {
    return new Set(state.history ? state.history.jobs.filter((j) => j.inspection).map((j) => j.id) : []);
  }

  // openInspection shows a saved inspection in the Your ClickHouse tab, as
  // the tab shows one it has just made.
  async function openInspection(id) {
    clearErrors("history");
    try {
      const v = await state.backend.call("Inspection", id);
      showView("clickhouse");
      renderClickHouse(v);
    } catch (err) {
      showError(err, "history");
    }
  }

  function historyTable(h) {
    if (!h.jobs.length) return el("div", { class: "empty", text: "No saved results yet. Results are kept in " + h.dir });
    const sel = state.historySelected;
    const pick = (ids, on) => { for (const id of ids) on ? sel.add(id) : sel.delete(id); renderHistory(); };
    const allIds = h.jobs.flatMap(jobIds);
    const head = el("tr", {},
      el("th", {}, el("input", { type: "checkbox", "aria-label": "select every job", checked: allIds.length > 0 && allIds.every((id) => sel.has(id)),
        onchange: (e) => pick(allIds, e.target.checked) })),
      el("th", {}), el("th", { text: "started" }), el("th", { text: "job" }), el("th", { text: "from" }), el("th", { class: "num", text: "results" }));
    const body = [];
    for (const j of h.jobs) {
      const ids = jobIds(j);
      const picked = ids.filter((id) => sel.has(id)).length;
      if (j.inspection) {
        // A saved inspection has no results: it opens in the Your
        // ClickHouse tab.
        const show = () => openInspection(j.id);
        body.push(el("tr", { class: "job inspection" + (picked ? " selected" : ""), "data-job": j.id, "data-count": "1" },
          el("td", {}, el("input", { type: "checkbox", "aria-label": "select inspection " + j.name, checked: picked > 0, onchange: (e) => pick(ids, e.target.checked) })),
          el("td", {}, el("button", { type: "button", class: "twisty", "aria-label": "open the inspection " + j.name, title: "open in Your ClickHouse", text: "↗", onclick: show })),
          el("td", { class: "when", text: j.started }),
          el("td", { class: "name", onclick: show }, el("div", { text: j.name }), el("small", { text: j.summary })),
          el("td", { text: j.face || "–" }),
          el("td", { class: "num", text: j.results })));
        continue;
      }
      const open = state.historyOpen.has(j.id);
      const toggle = () => { open ? state.historyOpen.delete(j.id) : state.historyOpen.add(j.id); renderHistory(); };
      const box = el("input", { type: "checkbox", "aria-label": "select job " + j.name, checked: picked > 0 && picked === ids.length,
        onchange: (e) => pick(ids, e.target.checked) });
      box.indeterminate = picked > 0 && picked < ids.length;
      body.push(el("tr", { class: "job" + (picked ? " selected" : "") + (j.legacy ? " legacy" : ""), "data-job": j.id, "data-count": String(ids.length) },
        el("td", {}, box),
        el("td", {}, el("button", { type: "button", class: "twisty", "aria-expanded": open ? "true" : "false",
          "aria-label": (open ? "hide" : "show") + " the results of " + j.name, text: open ? "▾" : "▸", onclick: toggle })),
        el("td", { class: "when", text: j.started }),
        el("td", { class: "name", onclick: toggle }, el("div", { text: j.name }), el("small", { text: j.summary })),
        el("td", { text: j.face || "–" }),
        el("td", { class: "num", text: j.results })));
      if (open) {
        // The job's results scroll in their own box, so that they do not
        // widen the jobs' table past its card.
        body.push(el("tr", { class: "job-results", "data-job": j.id }, el("td", { colspan: "6" },
          el("div", { class: "table-wrap" }, gridTable({ columns: h.columns, rows: j.rows }, {
            selectable: true, selected: sel, rowClass: "result",
            onToggle: (id, on) => pick([id], on),
            onToggleAll: (on) => pick(ids, on),
          })))));
      }
    }
    return el("table", { class: "grid history", id: "history-grid" }, el("thead", {}, head), el("tbody", {}, ...body));
  }

  function syncHistoryButtons() {
    const n = state.historySelected.size;
    const inspections = inspectionIds();
    $("#hist-compare").disabled = !Array.from(state.historySelected).some((id) => !inspections.has(id));
    const del = $("#hist-delete");
    del.disabled = n === 0;
    if (!del.classList.contains("armed")) del.textContent = "Delete selected";
  }

  async function deleteSelected() {
    const del = $("#hist-delete");
    const ids = Array.from(state.historySelected);
    if (!ids.length) return;
    if (!del.classList.contains("armed")) {
      del.classList.add("armed");
      del.textContent = `Delete ${ids.length} — sure?`;
      setTimeout(() => { del.classList.remove("armed"); syncHistoryButtons(); }, 4000);
      return;
    }
    del.classList.remove("armed");
    deleteResults(ids);
  }

  // deleteResults deletes saved results by id, drops them from the
  // selection, and shows the history again.
  async function deleteResults(ids) {
    clearErrors("history");
    const inspections = inspectionIds();
    try {
      for (const id of ids.filter((id) => inspections.has(id))) await state.backend.call("DeleteInspection", id);
      const results = ids.filter((id) => !inspections.has(id));
      if (results.length) await state.backend.call("Delete", results);
      state.historySelected.clear();
      const gone = new Set(ids);
      if (state.selection.some((id) => gone.has(id))) setSelection(state.selection.filter((id) => !gone.has(id)));
    } catch (err) {
      showError(err, "history");
    }
    loadHistory();
  }

  function showView(name) {
    $("#export-note").textContent = "";
    $("#chart-note").textContent = "";
    for (const b of $$("#viewtabs button")) b.classList.toggle("on", b.dataset.view === name);
    $("#view-results").hidden = name !== "results";
    $("#view-history").hidden = name !== "history";
    $("#view-plan").hidden = name !== "plan";
    $("#view-clickhouse").hidden = name !== "clickhouse";
    if (name === "clickhouse" && state.chChart) setTimeout(() => state.chChart.resize(), 0);
    if (name === "results" && state.chart) setTimeout(() => state.chart.resize(), 0);
    if (name === "plan") {
      for (const c of [state.planChart, state.frontChart]) if (c) setTimeout(() => c.resize(), 0);
    }
    if (name === "history") loadHistory(); // another lab or the command line may have saved results since
  }

  // ---- the plan: Go ranks every setup; this only shows the answer ----

  function buildPlanForm(limits) {
    const d = limits.defaults;
    for (const [id, types] of [["key", limits.plan_key_types || limits.types], ["value", limits.attribute_types]]) {
      $("#plan_" + id).replaceChildren(...types.map((t) =>
        el("option", { value: t.name, text: t.label, selected: t.name === d[id] })));
    }
    // The browser plans a native run unless asked for its own wasm memory.
    $("#plan_runtime_field").hidden = limits.runtime !== "browser";
    $("#plan_attr_add").onclick = () => addAttribute("#plan_attrs", limits, "UInt32");
    // A plan for a table of the user's server: the native app only (the
    // browser speaks to no ClickHouse); the table then says the rows, the
    // types and the largest key, so their fields are off.
    for (const f of $$(".plan-from")) f.hidden = limits.runtime === "browser";
    $("#plan_from").addEventListener("input", planFromChanged);
    planFromChanged();
  }

  function planFromChanged() {
    const from = planFrom();
    for (const id of ["#plan_rows", "#plan_key", "#plan_value", "#plan_max_key", "#plan_attr_add"]) $(id).disabled = from;
    for (const s of $$("#plan_attrs select, #plan_attrs button")) s.disabled = from;
    for (const id of ["#plan_key_column", "#plan_columns"]) $(id).disabled = !from;
  }

  function planFrom() {
    return $("#plan_from").value.trim() !== "" && !$("#plan_from").closest(".field").hidden;
  }

  // addAttribute adds one more attribute's type to a form's list, with a
  // button that removes it again.
  // Adding or removing one is a change of the form (the estimate follows).
  function addAttribute(list, limits, type) {
    const box = $(list);
    const changed = () => box.dispatchEvent(new Event("change", { bubbles: true }));
    const row = el("span", { class: "attr" },
      el("select", { "aria-label": "attribute type" }, ...(limits.attribute_types || limits.types).map((t) =>
        el("option", { value: t.name, text: t.label, selected: t.name === type }))),
      el("button", { type: "button", class: "small", text: "×", title: "remove this attribute",
        onclick: () => { row.remove(); changed(); } }));
    box.append(row);
    changed();
  }

  // attributesOf is every attribute's type when a form's dictionary has
  // more than its value, else none: the value is the first.
  function attributesOf(list, value) {
    const more = $$(list + " select").map((s) => s.value);
    return more.length ? [$(value).value, ...more] : [];
  }

  // The plan form's fields are the inputs of the same name after "plan_"
  // (the calibration's rows are plan_calibrate_rows, as in the errors).
  function readPlanForm() {
    const form = {};
    for (const name of ["rows", "key", "value", "memory", "threads", "prefer", "runtime", "max_key", "clickhouse_version", "growth", "for"]) {
      form[name] = $("#plan_" + name).value;
    }
    for (const name of ["first_load_only", "preallocate", "calibrate"]) form[name] = $("#plan_" + name).checked;
    form.calibration_rows = $("#plan_calibrate_rows").value;
    form.attributes = attributesOf("#plan_attrs", "#plan_value");
    if (planFrom()) {
      // The table says these (PlanFromTable); the server is the Your
      // ClickHouse tab's.
      Object.assign(form, { rows: "", key: "", value: "", max_key: "", attributes: [],
        from: $("#plan_from").value, key_column: $("#plan_key_column").value, columns: $("#plan_columns").value, server: readClickHouseForm() });
    }
    return form;
  }

  function snippetBox(sn) {
    const box = el("div", { class: "snippet" }, sn.title ? el("h3", { text: sn.title }) : null);
    if (sn.text) {
      box.append(el("pre", {}, el("code", { class: "lang-" + sn.lang, text: sn.text })),
        el("button", { type: "button", class: "small", text: "Copy", onclick: (e) => {
          const b = e.target;
          // No clipboard (a page over plain http) is a failure, not "Copied".
          (navigator.clipboard ? navigator.clipboard.writeText(sn.text) : Promise.reject())
            .then(() => { b.textContent = "Copied"; }, () => { b.textContent = "Select and copy"; });
        } }));
    }
    if (sn.note) box.append(el("div", { class: "note", text: sn.note }));
    return box;
  }

  function renderPlan(v) {
    $("#plan-out").hidden = false;
    const ans = $("#plan-answer");
    ans.className = "card plan-answer " + ((v.answers || []).some((a) => a.fits) || v.fits ? "fits" : "refused");
    // The two answers lead, ClickHouse's first: each its setup, whether it
    // fits and by how much, its figures and its CREATE DICTIONARY or Go code.
    const kids = [
      el("div", { class: "muted", text: v.headline }),
      // A line an answer, each in its own colour: ClickHouse's may not fit
      // where Go's does.
      v.answers && v.answers.length
        ? el("div", { class: "verdict", id: "plan-verdict" }, ...v.answers.map((a) => el("div", { class: "answer-line " + (a.fits ? "fits" : "refused"), text: a.line })))
        : el("div", { class: "verdict", id: "plan-verdict", text: v.answer }),
    ];
    for (const a of v.answers || []) {
      const item = el("div", { class: "plan-answer-item " + (a.fits ? "fits" : "refused"), id: "plan-answer-" + a.for, "data-answer": a.for },
        el("h3", { text: a.title + ": " + a.setup }),
        el("ul", {}, ...a.lines.map((l) => el("li", { text: l }))),
        // The item's heading names the setup: the snippet's says what the
        // code is (its own title repeated the item's, word for word).
        snippetBox(Object.assign({}, a.snippet, { title: !a.snippet.text ? "" : a.snippet.lang === "sql" ? "CREATE DICTIONARY" : "Go code" })));
      // A plan over a table of the server is built there, over that table
      // (as plan --from --verify); any other in ClickHouse itself.
      // FLAT is built over a table's ids alone (its arrays are their range).
      if (a.for === "clickhouse" && (v.from || canVerify() && !/^FLAT\(/.test(a.setup))) item.append(verifyBox(v.from));
      kids.push(item);
    }
    if (v.runners_up && v.runners_up.length) {
      kids.push(el("h3", { text: "Runners-up, and why each lost" }), el("ul", { id: "plan-runners-up" }, ...v.runners_up.map((l) => el("li", { text: l }))));
    }
    if (v.rule) kids.push(el("h3", { text: "How the plan decides" }), el("p", { class: "muted", id: "plan-rule", text: v.rule }));
    if (v.front && v.front.length) {
      kids.push(el("h3", { text: "The front: no other setup needs less memory and loads and reads as fast" }),
        el("ul", { id: "plan-front" }, ...v.front.map((l) => el("li", { text: l }))));
    }
    if (v.ruled_out && v.ruled_out.length) {
      kids.push(el("h3", { text: "Ruled out" }), el("ul", { id: "plan-ruled-out" }, ...v.ruled_out.map((l) => el("li", { text: l }))));
    }
    ans.replaceChildren(...kids);
    $("#plan-table-title").textContent = v.table_title;
    const table = {
      columns: v.header.map((h, i) => ({ name: h, numeric: v.numeric[i] })),
      rows: v.rows.map((cells) => ({ id: cells[0], cells })),
    };
    $("#plan-table").replaceChildren(gridTable(table, { id: "plan-grid" }));
    $("#plan-notes").replaceChildren(...v.how_made.map((l) => el("li", { text: l })));
    drawPlanChart("planChart", "plan-chart", v.chart);
    drawPlanChart("frontChart", "front-chart", v.front);
  }

  // canVerify: ClickHouse itself runs here (the desktop app with make
  // chdb's worker), so the ClickHouse answer can be built and measured.
  function canVerify() {
    const ch = state.limits.clickhouse;
    return state.limits.runtime !== "browser" && !!(ch && ch.available);
  }

  // verifyBox is the ClickHouse answer's "Build it in ClickHouse": Go
  // builds the dictionary, every attribute, in ClickHouse itself (VerifyPlan,
  // as packlab plan --verify does) and its lines go below the button.
  function verifyBox(onServer) {
    const out = el("div", { class: "plan-verified", id: "plan-verified" });
    const label = onServer ? "Build it on the server and measure" : "Build it in ClickHouse";
    const btn = el("button", { type: "button", class: "small", id: "plan-verify", text: label,
      title: onServer
        ? "Builds this dictionary on the server the Your ClickHouse tab names, over the table itself, every row of it, in a database of its own dropped afterwards, and puts what the server holds beside the plan's figures, as packlab plan --from --verify does."
        : "Builds this dictionary, every attribute of it, in ClickHouse itself at the plan's rows (1e7 at most) and puts what ClickHouse holds beside the plan's figures, as packlab plan --verify does. The run is kept in the history." });
    btn.addEventListener("click", () => verifyPlan(btn, out, label, onServer));
    return el("div", { class: "plan-verify" }, btn, out);
  }

  async function verifyPlan(btn, out, label, onServer) {
    clearErrors("plan-form");
    if (running()) {
      showError({ field: "plan", message: "a run is still going: cancel it or wait for it to finish" }, "plan");
      return;
    }
    btn.disabled = true;
    btn.textContent = "Building in ClickHouse…";
    document.body.dataset.verify = "busy";
    state.runId = state.limits.plan_verification_id;
    openProgress("Building the plan's dictionary in ClickHouse");
    let failed = false;
    try {
      const f = readPlanForm();
      f.calibrate = false;
      const v = await state.backend.call("VerifyPlan", f);
      out.replaceChildren(el("h4", { text: v.title }), el("ul", {}, ...v.lines.map((l) => el("li", { text: l }))));
      document.body.dataset.verify = "done";
    } catch (err) {
      failed = true;
      showError(err, "plan");
      document.body.dataset.verify = "error";
    } finally {
      btn.disabled = false;
      btn.textContent = label;
      // A server's build keeps no run: its database is dropped.
      closeProgress(failed ? "Build in ClickHouse stopped" : "Built in ClickHouse", failed ? "see the Plan tab" : onServer ? "on the server, dropped afterwards" : "its run kept in history", failed);
    }
  }

  // drawPlanChart draws one of the Plan tab's charts, view, in the card
  // whose chart box is #id (its title #id-title, its note #id-empty).
  function drawPlanChart(key, id, view) {
    const box = $("#" + id);
    const empty = $("#" + id + "-empty");
    if (!view || view.empty) {
      chartNote(state[key], empty, view ? view.note : "");
      return;
    }
    empty.hidden = true;
    $("#" + id + "-title").textContent = view.title;
    chartIn(key, box).setOption(view.option, true);
    // The chart may have been made before the Plan view had its width:
    // size it to its card once the answers above it are laid out.
    requestAnimationFrame(() => state[key].resize());
    box.dataset.kind = view.kind;
  }

  async function makePlan(ev) {
    ev.preventDefault();
    clearErrors("plan-form");
    const go = $("#plan-go");
    const f = readPlanForm();
    if (f.calibrate && running()) {
      showError({ field: "plan", message: "a run is still going: cancel it or wait for it to finish" }, "plan");
      return;
    }
    go.disabled = true;
    go.textContent = f.calibrate ? "Calibrating…" : "Planning…";
    document.body.dataset.plan = "busy";
    // A calibration measures as a run does: the progress card follows it
    // (its events carry the calibration's id) and Cancel stops it.
    const calibrating = f.calibrate;
    if (calibrating) {
      state.runId = state.limits.plan_calibration_id;
      openProgress("Calibrating the planner");
    }
    let failed = false, measured = 0;
    try {
      const v = await state.backend.call(f.from ? "PlanFromTable" : "Plan", f);
      v.from = !!f.from;
      measured = (v.calibrated || []).length;
      renderPlan(v);
      if (calibrating) $("#plan_calibrate").checked = false;
      document.body.dataset.plan = "done";
    } catch (err) {
      failed = true;
      showError(err, "plan");
      document.body.dataset.plan = "error";
    } finally {
      go.disabled = false;
      go.textContent = "Plan";
      if (calibrating) {
        closeProgress(failed ? "Calibration stopped" : "Calibrated", failed ? "see the Plan tab" :
          (measured ? `${measured} run${measured > 1 ? "s" : ""} measured, saved in history` : "nothing was missing"), failed);
      }
    }
  }

  // ---- Your ClickHouse: Go inspects the server and words every line ----

  // The form's fields are the inputs of the same name after "ch_"; Go's
  // errors name the form's fields (url, cluster, ...), and an error of the
  // connection as a whole is "clickhouse".
  const CH_FIELDS = ["url", "user", "password", "database", "cluster", "ca_file", "connect_timeout", "query_timeout"];

  function readClickHouseForm() {
    const form = {};
    for (const name of CH_FIELDS) form[name] = $("#ch_" + name).value;
    form.no_sample = $("#ch_no_sample").checked;
    return form;
  }

  function renderClickHouse(v) {
    $("#ch-out").hidden = false;
    $("#ch-headline").textContent = v.headline;
    // Where it is kept: a new inspection's job, a saved one opened from
    // History, or why it could not be kept.
    $("#ch-kept").textContent = v.save_problem ? "Not kept in the history: " + v.save_problem
      : v.started ? `Saved inspection of ${v.started} (job ${v.job_id}), opened from History`
        : v.job_id ? `Kept in the history as job ${v.job_id}: packlab report --job ${v.job_id} renders it` : "";
    $("#ch-kept").classList.toggle("error", !!v.save_problem);
    $("#ch-nodes").replaceChildren(...v.node_lines.map((l) => el("li", { text: l })));
    const t = v.table;
    $("#ch-table").replaceChildren(gridTable({
      columns: t.header.map((h, i) => ({ name: h, numeric: t.numeric[i] })),
      rows: t.rows.map((cells, i) => ({ id: String(i), cells })),
    }, { id: "ch-grid", empty: "No dictionary on this server." }));
    const lines = v.finding_lines || [];
    $("#ch-findings").replaceChildren(...(lines.length ? lines.map((l) => el("li", { text: l }))
      : [el("li", { class: "muted", text: "Nothing to report." })]));
    const advice = v.advice_boxes || [];
    // Each advice can be built on the server and measured there (a live
    // inspection, not one opened from History; on a cluster, on every
    // replica that holds it): Go words the verification's lines.
    const adviceBox = (a) => {
      const box = snippetBox({ title: a.title, text: a.ddl, lang: "sql", note: a.note });
      if (a.verified && a.verified.length) {
        box.append(el("ul", { class: "verified" }, ...a.verified.map((l) => el("li", { text: l }))));
      }
      if (a.name && !v.started) {
        box.append(el("button", { type: "button", class: "small verify", text: "Build it on the server and measure",
          title: "Makes a copy of " + a.name + " with this layout over its own source table, in a database of its own (on every replica that holds it, on a cluster), measures it and drops it",
          onclick: () => runInspect(a.name) }));
      }
      return box;
    };
    const buildable = new Set(advice.filter((a) => a.name).map((a) => a.name)).size > 1 && !v.started;
    $("#ch-advice").replaceChildren(el("h2", { text: "Advice" }),
      ...(buildable ? [el("button", { type: "button", class: "small verify-all", text: "Build every advised change on the server and measure",
        title: "One after another, each copy dropped before the next: every dictionary whose advice changes its layout",
        onclick: () => runInspect("", true) })] : []),
      ...(v.verify_problem ? [el("p", { class: "error", id: "ch-verify-problem", text: "Not verified: " + v.verify_problem })] : []),
      ...(advice.length ? advice.map(adviceBox)
        : [el("p", { class: "muted", text: "No dictionary to advise." })]));
    const box = $("#ch-chart");
    const empty = $("#ch-chart-empty");
    if (v.chart.empty) {
      chartNote(state.chChart, empty, v.chart.note);
      return;
    }
    empty.hidden = true;
    $("#ch-chart-title").textContent = v.chart.title;
    chartIn("chChart", box).setOption(v.chart.option, true);
    // As the Plan's charts: the tab may have just been shown (a reopened
    // inspection), so size the chart to its card once it is laid out (the
    // desktop smoke test once saw it stay blank for 10 s).
    requestAnimationFrame(() => state.chChart.resize());
    box.dataset.kind = v.chart.kind;
  }

  function inspectClickHouse(ev) {
    ev.preventDefault();
    return runInspect("");
  }

  // runInspect inspects the form's server, and with verify (a
  // dictionary's database.name) builds that dictionary's advice there.
  async function runInspect(verify, verifyAll) {
    clearErrors("ch-form");
    const go = $("#ch-go");
    const cancel = $("#ch-cancel");
    go.disabled = true;
    go.textContent = verifyAll ? "Building every change…" : verify ? "Building " + verify + "…" : "Inspecting…";
    for (const b of $$("#ch-advice button.verify, #ch-advice button.verify-all")) b.disabled = true;
    cancel.disabled = false;
    document.body.dataset.clickhouse = "busy";
    try {
      renderClickHouse(await state.backend.call("InspectClickHouse", { ...readClickHouseForm(), verify, verify_all: !!verifyAll }));
      document.body.dataset.clickhouse = "done";
    } catch (err) {
      const e = Backend.normalizeError(err);
      showError({ field: "ch_" + (e.field || "clickhouse"), message: e.message }, "ch_clickhouse");
      document.body.dataset.clickhouse = "error";
    } finally {
      go.disabled = false;
      go.textContent = "Inspect";
      cancel.disabled = true;
    }
  }

  // buildClickHouse sets the tab up: the form in the desktop window, and
  // in a browser why it cannot inspect there.
  function buildClickHouse() {
    const desktop = state.backend.kind === "wails";
    $("#ch-browser").hidden = desktop;
    $("#ch-connect").hidden = !desktop;
    if (!desktop) return;
    $("#ch-form").addEventListener("submit", inspectClickHouse);
    $("#ch-cancel").addEventListener("click", () => state.backend.call("CancelInspect").catch((err) => showError(err, "ch_clickhouse")));
  }

  // ---- start ----

  function renderMachine(l) {
    $("#machine").replaceChildren(
      el("span", {}, el("b", { text: l.cores_text })),
      el("span", {}, el("b", { text: l.total_memory_text }), " memory, ", el("b", { text: l.free_memory_text }), " free"),
      el("span", { class: "pill", text: l.runtime + (l.isolated ? " · worker process per run" : " · in process") }));
  }

  async function main() {
    try {
      state.backend = await Backend.connect();
      state.limits = await state.backend.call("Limits");
    } catch (err) {
      showError(err, "banner");
      return;
    }
    const l = state.limits;
    renderMachine(l);
    buildForm(l);
    buildChartTabs(l.chart_kinds);
    buildPlanForm(l);
    $("#plan-form").addEventListener("submit", makePlan);
    buildClickHouse();

    window.addEventListener("focus", recheckWorkers);
    state.backend.on("run:progress", onProgress);
    state.backend.on("run:result", onResult);
    state.backend.on("run:error", onRunError);
    state.backend.on("run:done", onDone);

    const form = $("#form");
    form.addEventListener("submit", startRun);
    form.addEventListener("input", (e) => {
      if (e.target.id === "max_load_factor" || e.target.id === "mlf_default") syncMLF();
      scheduleEstimate();
    });
    form.addEventListener("change", (e) => {
      if (e.target.id === "keys") syncKeysParam(false);
      if (e.target.id === "mlf_default") syncMLF();
      scheduleEstimate();
    });
    $("#cancel").addEventListener("click", cancelRun);
    for (const b of $$("#source-mode button")) {
      b.addEventListener("click", () => { setSourceMode(b.dataset.mode); scheduleEstimate(); });
    }
    $("#choose-file").addEventListener("click", async () => {
      clearErrors("source");
      try {
        const res = await state.backend.call("ChooseSource");
        if (!res.cancelled) { $("#source").value = res.path; scheduleEstimate(); }
      } catch (err) {
        showError(err, "source");
      }
    });
    for (const b of $$("[data-export]")) b.addEventListener("click", () => exportTable(b.dataset.export));
    for (const b of $$("[data-chart-export]")) b.addEventListener("click", () => exportChart(b.dataset.chartExport));
    for (const b of $$("#viewtabs button")) b.addEventListener("click", () => showView(b.dataset.view));
    $("#hist-compare").addEventListener("click", () => {
      // The comparison now shows these results, not the last run: the run's
      // card goes, and the results' heading (Go's Table title) says what
      // they are.
      $("#progress").hidden = true;
      const inspections = inspectionIds();
      setSelection(Array.from(state.historySelected).filter((id) => !inspections.has(id)));
    });
    $("#hist-delete").addEventListener("click", deleteSelected);
    $("#hist-clear").addEventListener("click", clearHistory);

    syncRunButtons();
    renderChart(state.chartKind);
    await loadHistory();
    await estimate();
    document.body.dataset.ready = "true";
  }

  document.addEventListener("DOMContentLoaded", main);
})();
