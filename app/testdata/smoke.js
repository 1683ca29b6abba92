// The desktop smoke test's script. app/desktop_test.go prepends
//   const SMOKE = {phase: "run" | "history" | "families" | "dialog", expect: [result ids or layouts], recheck: bool};
// and the app runs it in the real page once it has loaded (WindowExecJS).
// It drives the page as a person would — fills the form, clicks Run, the
// chart tabs, Export, History — and reports what it saw through the bound
// method window.go.desktop.smokeHook.Report. It checks nothing itself beyond
// collecting facts; the Go test decides.
(async function () {
  "use strict";
  const report = { phase: SMOKE.phase, ok: false, steps: [], charts: {}, exports: {} };
  const t0 = Date.now();
  const step = (name) => report.steps.push({ name, ms: Date.now() - t0 });
  const $ = (s) => document.querySelector(s);
  const $$ = (s) => Array.from(document.querySelectorAll(s));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  async function until(what, fn, timeoutMs) {
    const end = Date.now() + (timeoutMs || 20000);
    for (;;) {
      let v;
      try { v = fn(); } catch (_) { v = false; }
      if (v) return v;
      if (Date.now() > end) throw new Error("timed out waiting for " + what);
      await sleep(50);
    }
  }
  function setValue(id, value) {
    const e = document.getElementById(id);
    e.value = value;
    e.dispatchEvent(new Event("input", { bubbles: true }));
    e.dispatchEvent(new Event("change", { bubbles: true }));
  }
  const errorText = (field) => ($(`[data-error-for="${field}"]`) || {}).textContent || "";
  // canvasInk counts the pixels of the chart's canvases that are neither
  // transparent nor white: a drawn chart has thousands.
  function canvasInk(box) {
    let ink = 0, w = 0, h = 0;
    for (const c of $$((box || "#chart") + " canvas")) {
      w = Math.max(w, c.width); h = Math.max(h, c.height);
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i + 3] > 0 && !(d[i] > 245 && d[i + 1] > 245 && d[i + 2] > 245)) ink++;
      }
    }
    return { ink, width: w, height: h };
  }
  const send = (r) => window.go.desktop.smokeHook.Report(JSON.stringify(r));

  try {
    await until("the page to load the lab's limits", () => document.body.dataset.ready === "true", 30000);
    step("ready");
    report.backend = document.querySelector("#machine").textContent;

    if (SMOKE.phase === "clickhouse") {
      // The Your ClickHouse tab: a bad URL is the url field's error; the
      // test server (SMOKE.expect[0]) inspected shows its dictionary's row,
      // its advice, and a chart; nothing is wider than the window.
      $('#viewtabs button[data-view="clickhouse"]').click();
      setValue("ch_url", "localhost");
      $("#ch-form").requestSubmit();
      await until("the url's error", () => document.body.dataset.clickhouse === "error");
      report.ch = { url_error: errorText("ch_url") };
      setValue("ch_url", SMOKE.expect[0]);
      $("#ch-form").requestSubmit();
      await until("the inspection", () => document.body.dataset.clickhouse === "done", 60000);
      await until("the chart", () => $("#ch-chart").dataset.kind && canvasInk("#ch-chart").ink > 1000, 20000);
      step("inspected");
      Object.assign(report.ch, {
        url_error_after: errorText("ch_url"),
        header: $$("#ch-grid thead th").map((th) => th.textContent),
        rows: $$("#ch-grid tbody tr").map((tr) => Array.from(tr.cells).map((td) => td.textContent)),
        nodes: $$("#ch-nodes li").map((li) => li.textContent),
        advice: $$("#ch-advice pre").map((p) => p.textContent),
        copy: $$("#ch-advice .snippet button:not(.verify)").map((b) => b.textContent),
        chart_ink: canvasInk("#ch-chart").ink,
        // Whatever is wider than its box: the page, or a card of the tab
        // (a table scrolls inside its own box, which is not a card).
        wide: [document.documentElement, ...$$("#view-clickhouse .card")]
          .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || e.tagName),
      });
      report.ch.kept = $("#ch-kept").textContent;
      // The advice built on the server: its verification's lines under it,
      // and the tab inspected again around it.
      report.ch.verify_buttons = $$("#ch-advice button.verify").map((b) => b.textContent);
      $("#ch-advice button.verify").click();
      await until("the verification", () => document.body.dataset.clickhouse === "done" && $$("#ch-advice ul.verified li").length > 0, 60000);
      report.ch.verified = $$("#ch-advice ul.verified li").map((li) => li.textContent);
      report.ch.verified_wide = [document.documentElement, ...$$("#view-clickhouse .card")]
        .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || e.tagName);
      step("verified");
      // The Plan tab over a table of the same server (the tab's URL): the
      // answer's CREATE DICTIONARY reads it, the fields it says are off.
      $('#viewtabs button[data-view="plan"]').click();
      setValue("plan_from", "visits");
      $("#plan-form").requestSubmit();
      await until("the plan over visits", () => ["done", "error"].includes(document.body.dataset.plan), 60000);
      report.ch.plan_from = {
        headline: document.body.dataset.plan === "done" ? $("#plan-answer .muted").textContent : "error: " + errorText("plan") + errorText("plan_from"),
        sql: $$("#plan-answer pre code.lang-sql").map((c) => c.textContent),
        off: ["plan_rows", "plan_key", "plan_value", "plan_max_key"].filter((id) => document.getElementById(id).disabled),
        wide: [document.documentElement, ...$$("#view-plan .card")].filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || e.tagName),
        verify: $("#plan-verify") ? $("#plan-verify").textContent : "",
      };
      step("planned from a table");
      // Built there, over the table.
      $("#plan-verify").click();
      await until("the build on the server", () => ["done", "error"].includes(document.body.dataset.verify), 60000);
      report.ch.plan_from.verified = $$("#plan-verified h4, #plan-verified li").map((e) => e.textContent).concat(document.body.dataset.verify === "error" ? ["error: " + errorText("plan")] : []);
      setValue("plan_from", "");
      step("built from a table");
      // The inspection is a job of History: its row opens it again in the
      // tab, from the saved file.
      $('#viewtabs button[data-view="history"]').click();
      await until("the inspection in History", () => $$("#history-grid tr.job.inspection").length > 0, 20000);
      const row = $("#history-grid tr.job.inspection");
      report.ch.history_row = Array.from(row.cells).map((td) => td.textContent);
      report.ch.history_wide = [document.documentElement, ...$$("#view-history .card")]
        .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || e.tagName);
      $("#ch-grid tbody").replaceChildren();
      row.querySelector("button.twisty").click();
      await until("the saved inspection opened", () => !$("#view-clickhouse").hidden && $("#ch-kept").textContent.startsWith("Saved inspection"), 20000);
      report.ch.opened_kept = $("#ch-kept").textContent;
      report.ch.opened_rows = $$("#ch-grid tbody tr").map((tr) => Array.from(tr.cells).map((td) => td.textContent));
      report.ch.opened_verified = $$("#ch-advice ul.verified li").length;
      report.ch.opened_verify_buttons = $$("#ch-advice button.verify").length;
      step("reopened");
      $("#ch-chart").scrollIntoView({ block: "end" });
      await sleep(600);
      report.final_chart = canvasInk("#ch-chart");
      const box = $("#ch-chart").getBoundingClientRect();
      Object.assign(report.final_chart, { x: Math.round(box.x), y: Math.round(box.y),
        w: Math.round(box.width), h: Math.round(Math.min(box.height, window.innerHeight - box.y)), dpr: window.devicePixelRatio });
      report.ok = true;
      await send(report);
      return;
    }

    if (SMOKE.phase === "dialog") {
      // The native file dialog opens (Choose… of a file source) and stays
      // open: the test reads the app's output, then stops it.
      $('#source-mode button[data-mode="file"]').click();
      $("#choose-file").click();
      await sleep(2500);
      report.ok = true;
      step("dialog open");
      await send(report);
      return;
    }

    if (SMOKE.phase === "families") {
      // Every family of layouts runs from the window: ClickHouse's own
      // (ch_hashed) and a C++ map (boost_flat), ticked in their own chip
      // groups, with none of packlab's.
      report.families = { chips: {} };
      // The C++ maps' worker appears while the window is open (the test
      // puts it in place once told): "check again" finds it, no restart.
      const boost = () => $('#form input[name="layouts"][value="boost_flat"]');
      if (SMOKE.recheck) {
        report.families.before = boost().disabled ? "disabled" : "enabled";
        report.families.link = !!$("#refs-note .check-again");
        await window.go.desktop.smokeHook.Mark("unbuilt");
        for (const end = Date.now() + 30000; boost().disabled && Date.now() < end;) {
          const a = $("#refs-note .check-again");
          if (a) a.click();
          await sleep(400);
        }
        report.families.after = boost().disabled ? "disabled" : "enabled";
      }
      report.families.notes = [$("#refs-note").textContent, $("#ch-note").textContent];
      // The key's and the value's selects side by side ("+ attribute" in
      // the value's label once pushed its select 16 px down).
      report.families.tops = ["#key", "#value"].map((s) => Math.round($(s).getBoundingClientRect().top));
      for (const name of SMOKE.expect) {
        const box = $(`#form input[name="layouts"][value="${name}"]`);
        report.families.chips[name] = box ? (box.disabled ? "disabled" : "enabled") : "missing";
      }
      // "+ attribute" with hashed ticked: the error says what to tick, and
      // the sidebar keeps its shape.
      for (const box of $$('#form input[name="layouts"]')) if (box.checked !== (box.value === "hashed")) box.click();
      const keyWidth = $("#key").getBoundingClientRect().width;
      $("#attr_add").click();
      await until("the attributes error", () => errorText("attributes") !== "");
      const side = $(".form-fields");
      report.families.attr = { error: errorText("attributes"), key_before: Math.round(keyWidth),
        key_after: Math.round($("#key").getBoundingClientRect().width), side_scroll: side.scrollWidth, side_client: side.clientWidth };
      report.families.wide = $$(".sidebar *").filter((e) => e.getBoundingClientRect().right > side.getBoundingClientRect().right).map((e) => e.tagName + "#" + e.id + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).slice(0, 8);
      $("#attrs button").click();
      await until("the attributes error to clear", () => errorText("attributes") === "");
      if (Object.values(report.families.chips).every((c) => c === "enabled")) {
        for (const box of $$('#form input[name="layouts"]')) if (box.checked !== SMOKE.expect.includes(box.value)) box.click();
        setValue("rows", "1e5");
        await until("the prediction to fit", () => $("#estimate").classList.contains("fits") && !$("#run").disabled &&
          $$("#estimate .est-row").length === SMOKE.expect.length, 30000);
        $("#run").click();
        await until("the run to start", () => document.body.dataset.run === "running", 10000);
        await until("the run to finish", () => document.body.dataset.run === "idle", 120000);
        report.progress_title = $("#progress-title").textContent;
        report.progress_phase = $("#progress-phase").textContent;
        report.run_error = errorText("run");
        await until("the results", () => $$("#results-grid tbody tr").length === SMOKE.expect.length, 20000);
        report.table_rows = $$("#results-grid tbody tr").map((tr) => Array.from(tr.cells).map((c) => c.textContent));
        report.families.table = [$("#results-table").scrollWidth, $("#results-table").clientWidth];
        step("families run");
      }
      report.ok = true;
      await send(report);
      return;
    }

    if (SMOKE.phase === "history") {
      // After a restart: History lists the jobs, newest first — the first
      // phase's run and whatever ran since from the command line.
      $('#viewtabs button[data-view="history"]').click();
      await until("history jobs", () => $$("#history-grid tr.job").length >= 1);
      report.history_jobs = $$("#history-grid tr.job").map((tr) => ({
        name: tr.querySelector("td.name div").textContent, from: tr.cells[4].textContent,
        started: tr.cells[2].textContent, count: Number(tr.dataset.count),
      }));
      // Open every job: its results show under it.
      for (const b of $$('#history-grid tr.job button.twisty[aria-expanded="false"]')) { b.click(); await sleep(50); }
      await until("every job open", () => $$("#history-grid tr.job-results").length === $$("#history-grid tr.job").length);
      report.history_ids = $$("#history-grid tr.result").map((tr) => tr.dataset.id);
      // Pick the first phase's results and compare: the table and a chart
      // come back, and the heading says which job they are from.
      for (const id of SMOKE.expect) {
        const box = $(`#history-grid tr.result[data-id="${id}"] input[type=checkbox]`);
        if (box && !box.checked) { box.click(); await sleep(100); }
      }
      await until("compare enabled", () => !$("#hist-compare").disabled);
      $("#hist-compare").click();
      await until("results table", () => $$("#results-grid tbody tr").length === SMOKE.expect.length && $("#results-desc").textContent !== "");
      report.results_desc = $("#results-desc").textContent;
      report.progress_hidden = $("#progress").hidden;
      report.table_rows = $$("#results-grid tbody tr").map((tr) => Array.from(tr.cells).map((c) => c.textContent));
      const kind = $("#charttabs button").dataset.kind;
      await until("the first chart", () => $("#chart").dataset.kind === kind, 20000);
      report.charts[kind] = canvasInk();
      step("history");

      // The Plan tab: a bad row count is named beside its field; 1e9 rows in
      // 24 GiB gets an answer, the layouts ruled out, a table and a chart.
      $('#viewtabs button[data-view="plan"]').click();
      setValue("plan_rows", "0");
      $("#plan-form").requestSubmit();
      await until("the plan's rows error", () => errorText("plan_rows") !== "");
      report.plan_rows_error = errorText("plan_rows");
      setValue("plan_rows", "1e9");
      setValue("plan_memory", "24GiB");
      $("#plan-form").requestSubmit();
      await until("the plan", () => document.body.dataset.plan === "done" && $("#plan-verdict"), 20000);
      await sleep(300);
      const ink = { ink: 0, width: 0, height: 0 };
      for (const c of $$("#plan-chart canvas")) {
        ink.width = Math.max(ink.width, c.width); ink.height = Math.max(ink.height, c.height);
        const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && !(d[i] > 245 && d[i + 1] > 245 && d[i + 2] > 245)) ink.ink++;
      }
      report.plan = {
        verdict: $("#plan-verdict").textContent,
        ruled_out: $$("#plan-ruled-out li").map((li) => li.textContent),
        rows: $$("#plan-grid tbody tr").length,
        snippets: $$("#plan-answer pre").map((p) => p.textContent),
        chart_ink: ink.ink,
      };
      step("plan");

      // A String key, from the plan's key menu: ClickHouse's COMPLEX_KEY_
      // layouts alone (no Go table holds one), the card within the window.
      setValue("plan_key", "String");
      document.body.dataset.plan = "";
      $("#plan-form").requestSubmit();
      await until("the String key's plan", () => ["done", "error"].includes(document.body.dataset.plan) && ($("#plan-verdict") || errorText("plan")), 20000);
      report.plan_string_key = {
        state: document.body.dataset.plan,
        verdict: $("#plan-verdict") ? $("#plan-verdict").textContent : "",
        error: errorText("plan") + errorText("plan_key"),
        snippets: $$("#plan-answer pre").map((p) => p.textContent),
        wide: [document.documentElement, ...$$("#view-plan .card")].filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || e.tagName),
      };
      setValue("plan_key", "UInt64");
      step("plan of a String key");

      // Where ClickHouse runs here, the ClickHouse answer of a small plan
      // built in ClickHouse itself: its lines under the button.
      report.verify = { state: "absent" };
      if ($("#plan-verify")) {
        setValue("plan_rows", "2e5");
        document.body.dataset.plan = "";
        $("#plan-form").requestSubmit();
        await until("the small plan", () => ["done", "error"].includes(document.body.dataset.plan), 20000);
        if (!$("#plan-verify")) {
          // Said, not timed out on: the plan's state, its error, its answers.
          throw new Error("the small plan (2e5 rows) has no Build it in ClickHouse button: state " + document.body.dataset.plan +
            ", error " + JSON.stringify(errorText("plan") + errorText("plan_rows")) + ", verdict " + JSON.stringify($("#plan-verdict") ? $("#plan-verdict").textContent : ""));
        }
        $("#plan-verify").click();
        await until("the build in ClickHouse", () => ["done", "error"].includes(document.body.dataset.verify), 120000);
        const title = $("#plan-verified h4");
        report.verify = {
          state: document.body.dataset.verify,
          title: title ? title.textContent : "",
          lines: $$("#plan-verified li").map((li) => li.textContent),
          error: errorText("plan"),
          progress_title: $("#progress-title").textContent,
        };
        setValue("plan_rows", "1e9");
        step("verify");
      }

      // Its calibration measures as a run does: the progress card follows
      // it (the idle before the first load counting down), and Cancel
      // stops it, the Plan tab saying what was kept.
      const runDisabledBefore = $("#run").disabled;
      $("#plan_calibrate").checked = true;
      $("#plan-form").requestSubmit();
      await until("the calibration's idle", () => $("#progress-title").textContent === "Calibrating the planner" &&
        $("#progress-phase").textContent.startsWith("idling "), 20000);
      report.calibration = { title: $("#progress-title").textContent, phase: $("#progress-phase").textContent,
        run_disabled: $("#run").disabled };
      $("#cancel").click();
      await until("the calibration's cancel", () => document.body.dataset.plan === "error", 20000);
      report.calibration.error = errorText("plan");
      report.calibration.after = $("#progress-title").textContent;
      report.calibration.run_button_restored = $("#run").disabled === runDisabledBefore;
      step("calibration cancelled");

      // The desktop run beside the command line's run with one thread:
      // the settings say "threads 2" and "threads 1", and the table keeps
      // every column in its card (bytes/entry went off its edge).
      $('#viewtabs button[data-view="history"]').click();
      // (a click draws History again: each job's box is looked up anew)
      const jobs = () => $$("#history-grid tr.job").map((tr) => ({ name: tr.querySelector("td.name div").textContent, box: tr.querySelector("input[type=checkbox]") }));
      for (const { name } of jobs()) {
        const { box } = jobs().find((j) => j.name === name);
        const want = name === "run sparse 1e4" || name === "run hashed,packed 1e5";
        if (box.checked !== want || box.indeterminate) { box.click(); await sleep(50); }
        const again = jobs().find((j) => j.name === name).box;
        if (again.checked !== want) { again.click(); await sleep(50); }
      }
      await until("compare enabled", () => !$("#hist-compare").disabled);
      $("#hist-compare").click();
      await until("the three results", () => $$("#results-grid tbody tr").length === 3, 20000);
      report.threads = { settings: $$("#results-grid tbody td:first-child").map((td) => td.textContent),
        table: [$("#results-table").scrollWidth, $("#results-table").clientWidth] };
      step("threads compared");
      report.ok = true;
      await send(report);
      return;
    }

    report.window = { x: window.screenX, y: window.screenY, w: window.innerWidth, h: window.innerHeight };
    // The C++ reference maps are listed beside packlab's layouts: runnable
    // where their worker is built, else disabled, with the command.
    report.references = {
      names: $$("#ref-layouts input").map((i) => i.value),
      disabled: $$("#ref-layouts input").filter((i) => i.disabled).length,
      note: $("#refs-note").textContent,
    };

    // A bad row count is named next to its field, and Run is off.
    setValue("rows", "ten");
    await until("the rows error", () => errorText("rows") !== "");
    report.rows_error = errorText("rows");
    report.run_disabled_on_error = $("#run").disabled;
    step("bad rows shown");

    // A file source with no file chosen is named next to the file box.
    $('#source-mode button[data-mode="file"]').click();
    await until("the source error", () => errorText("source") !== "");
    report.source_error = errorText("source");
    report.rows_disabled_for_file = $("#rows").disabled;
    $('#source-mode button[data-mode="synthetic"]').click();
    await until("the source error to clear", () => errorText("source") === "" && errorText("rows") !== "");
    step("file source checked");

    // Cancel in the middle of a long load: the progress bar moves, Cancel
    // stops it, nothing is kept.
    for (const box of $$('#layouts input[type=checkbox]')) {
      if (box.checked !== (box.value === "packed")) box.click();
    }
    setValue("rows", "200M");
    await until("the big run's prediction", () => $("#estimate").classList.contains("fits") && !$("#run").disabled && errorText("rows") === "");
    $("#run").click();
    await until("progress of the big run", () => document.body.dataset.run === "running" && /^[1-9]/.test($("#p-rows").textContent), 30000);
    report.cancel_progress = { rows: $("#p-rows").textContent, rate: $("#p-rate").textContent, eta: $("#p-eta").textContent, rss: $("#p-rss").textContent, bar: $("#progress-bar").style.width,
      // the figures cut short in their boxes ("1,000,000 / 1,000…" once)
      cut: ["p-rows", "p-rate", "p-eta", "p-rss", "p-layout"].filter((id) => $("#" + id).scrollWidth > $("#" + id).clientWidth) };
    const cancelAt = Date.now();
    $("#cancel").click();
    await until("the cancel", () => document.body.dataset.run === "idle", 30000);
    report.cancel_ms = Date.now() - cancelAt;
    report.cancel_title = $("#progress-title").textContent;
    report.cancel_message = $("#progress-phase").textContent;
    step("cancelled");

    // The comparison: packed vs hashed, UInt64 -> UInt16, 1e5 rows.
    for (const box of $$('#layouts input[type=checkbox]')) {
      const want = box.value === "packed" || box.value === "hashed";
      if (box.checked !== want) box.click();
    }
    setValue("key", "UInt64");
    setValue("value", "UInt16");
    setValue("rows", "1e5");
    await until("the prediction to fit", () => $("#estimate").classList.contains("fits") && !$("#run").disabled && errorText("rows") === "");
    report.estimate = $("#estimate").textContent;
    step("estimate fits");

    $("#run").click();
    await until("the run to start", () => document.body.dataset.run === "running", 10000);
    step("running");
    await until("the run to finish", () => document.body.dataset.run === "idle", 120000);
    report.progress_title = $("#progress-title").textContent;
    report.progress_phase = $("#progress-phase").textContent;
    report.progress_rows = $("#p-rows").textContent;
    report.run_error = errorText("run");
    step("finished");

    await until("two rows in the results table", () => $$("#results-grid tbody tr").length === 2);
    report.table_header = $$("#results-grid thead th").map((th) => th.textContent);
    report.table_rows = $$("#results-grid tbody tr").map((tr) => Array.from(tr.cells).map((c) => c.textContent));
    report.result_ids = $$("#results-grid tbody tr").map((tr) => tr.dataset.id);
    step("table");

    // Every chart tab draws on its canvas.
    for (const tab of $$("#charttabs button")) {
      const kind = tab.dataset.kind;
      tab.click();
      try {
        await until("chart " + kind, () => $("#chart").dataset.kind === kind, 20000);
        await sleep(150);
        report.charts[kind] = Object.assign(canvasInk(), {
          empty: $("#chart").dataset.empty === "true", title: $("#chart-title").textContent,
        });
      } catch (e) {
        report.charts[kind] = { error: String(e.message || e), note: $("#chart-empty").textContent, chart_error: errorText("chart") };
      }
    }
    step("charts");

    // Export: the first chart as PNG and SVG, then the report, tables and JSON.
    $$("#charttabs button")[0].click();
    const first = $$("#charttabs button")[0].dataset.kind;
    await until("the first chart again", () => $("#chart").dataset.kind === first, 20000);
    await sleep(200);
    for (const fmt of ["png", "svg"]) {
      $("#chart-note").textContent = "";
      $(`[data-chart-export="${fmt}"]`).click();
      await until(fmt + " export", () => $("#chart-note").textContent !== "" || errorText("chart") !== "", 20000);
      report.exports[fmt] = { note: $("#chart-note").textContent, error: errorText("chart") };
    }
    for (const what of ["report", "markdown", "csv", "json"]) {
      $("#export-note").textContent = "";
      $(`[data-export="${what}"]`).click();
      await until(what + " export", () => $("#export-note").textContent !== "" || errorText("export") !== "", 20000);
      report.exports[what] = { note: $("#export-note").textContent, error: errorText("export") };
    }
    step("exports");

    // History lists the run as one job; opened, it shows both results.
    $('#viewtabs button[data-view="history"]').click();
    await until("history jobs", () => $$("#history-grid tr.job").length >= 1);
    report.history_jobs = $$("#history-grid tr.job").map((tr) => ({
      name: tr.querySelector("td.name div").textContent, from: tr.cells[4].textContent,
      started: tr.cells[2].textContent, count: Number(tr.dataset.count),
    }));
    $("#history-grid tr.job button.twisty").click();
    await until("the job's results", () => $$("#history-grid tr.result").length >= 2);
    report.history_ids = $$("#history-grid tr.result").map((tr) => tr.dataset.id);
    $('#viewtabs button[data-view="results"]').click();
    await until("the chart after switching back", () => $("#chart").dataset.kind === first, 20000);
    await sleep(600); // let the resize settle before the screenshot
    report.final_chart = canvasInk(); // what the screenshot shows, and where
    const box = $("#chart").getBoundingClientRect();
    Object.assign(report.final_chart, { x: Math.round(box.x), y: Math.round(box.y),
      w: Math.round(box.width), h: Math.round(Math.min(box.height, window.innerHeight - box.y)), dpr: window.devicePixelRatio });
    step("history");
    report.ok = true;
  } catch (e) {
    report.error = String((e && e.message) || e);
    report.banner = ($("#banner") || {}).textContent;
    report.estimate = ($("#estimate") || {}).textContent;
  }
  report.ms = Date.now() - t0;
  await send(report);
})();
