// Segment page: split an episode into subtasks on a timeline, one template per segment.
// Hand-written, no build step, no dependencies; the helpers and the frame player shared with
// the review page are in common.js. Every text from the server is set with textContent
// (never innerHTML), so labels and notes cannot inject markup. The server renders labels
// and checks findings (POST .../check); this file only edits the list.
"use strict";

(() => {
  const {
    config, $, h, api, post, setStatus, badge,
    episodeFromHash, onEpisodeHash, episodeItem, highlightEpisode, isTyping, bindKeys,
    fitCanvas, extent, niceStep, player, chosenGroups, groupChips,
  } = window.StrandsLabels;

  const OP_COLORS = {
    navigate: "#3b82f6", open: "#8b5cf6", close: "#a78bfa", slide: "#6366f1", pick: "#16a34a",
    place: "#f59e0b", pour: "#0ea5e9", push: "#64748b", hold: "#06b6d4", activate: "#ef4444",
    deactivate: "#fb7185", adjust: "#d946ef", stir: "#84cc16", scrub: "#14b8a6", agitate: "#eab308",
    press: "#a16207", wait: "#94a3b8", idle: "#cbd5e1", bring: "#2563eb", pass: "#0d9488",
    rotate: "#c026d3", terminal: "#475569",
  };
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  const PLACEHOLDERS = {
    setting: "e.g. medium", orientation: "e.g. upside down", direction: "e.g. left", relation: "e.g. next to",
  };
  const CHECK_DELAY = 140;
  const MAX_UNDO = 100;

  const state = {
    rows: [], // episode list rows shown so far
    list: null,
    episode: null,
    detail: null,
    series: null,
    segments: [], // {start, end, template_id, slots, modifiers, note}
    findings: [],
    edits: 0, // bumped on every edit; a check answer applies only to the edits it saw
    frame: 0,
    playing: false,
    selected: null, // frame of the selected boundary
    undo: [],
    loaded: "", // snapshot of the segments as opened
    choices: new Map(),
    busy: false,
    loadTicket: 0,
    pendingLeave: null,
    prefetched: new Set(),
  };

  // ---------------------------------------------------------------- helpers
  function seconds(frame) {
    return (frame / state.detail.fps).toFixed(2);
  }

  function annotator() {
    return $("annotator").value.trim() || config.annotator;
  }

  function plural(n, word) {
    return `${n} ${word}${n === 1 ? "" : "s"}`;
  }

  function colorOf(templateId) {
    const choice = state.choices.get(templateId);
    return choice ? OP_COLORS[choice.operation] || "#64748b" : null;
  }

  // ---------------------------------------------------------------- segments model
  function blank(start, end) {
    return { start, end, template_id: null, slots: {}, modifiers: {}, note: null, view: null };
  }

  // `view` holds what the last check said ({label, error}); it is never sent
  function fromServer(seg) {
    return {
      start: seg.start,
      end: seg.end,
      template_id: seg.template_id || null,
      slots: { ...(seg.slots || {}) },
      modifiers: { ...(seg.modifiers || {}) },
      note: seg.note || null,
      free: Boolean(seg.free && !seg.template_id),
      label: seg.free && !seg.template_id ? seg.label : null,
      view: seg.label ? { label: seg.label, error: null } : null,
    };
  }

  function clean(seg) {
    const pick = (obj) => Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== "" && v !== null));
    // a free label (another tool's text no template fits) is sent back as written
    if (seg.free && !seg.template_id) {
      return { start: seg.start, end: seg.end, label: seg.label, free: true, note: seg.note && seg.note.trim() ? seg.note.trim() : null };
    }
    return {
      start: seg.start,
      end: seg.end,
      template_id: seg.template_id,
      slots: pick(seg.slots),
      modifiers: pick(seg.modifiers),
      note: seg.note && seg.note.trim() ? seg.note.trim() : null,
    };
  }

  function snapshot() {
    return JSON.stringify(state.segments.map(clean));
  }

  function dirty() {
    return state.detail !== null && snapshot() !== state.loaded;
  }

  function sortSegments() {
    state.segments.sort((a, b) => a.start - b.start || a.end - b.end);
  }

  function segmentAt(frame) {
    return state.segments.findIndex((s) => s.start <= frame && frame < s.end);
  }

  // boundary i separates segments i and i+1 when they touch
  function boundaries() {
    const out = [];
    for (let i = 0; i + 1 < state.segments.length; i += 1) {
      if (state.segments[i].end === state.segments[i + 1].start) out.push({ index: i, frame: state.segments[i].end });
    }
    return out;
  }

  function boundaryIndex(frame) {
    const found = boundaries().find((b) => b.frame === frame);
    return found ? found.index : -1;
  }

  function pushUndo(before = snapshot()) {
    state.undo.push(before);
    if (state.undo.length > MAX_UNDO) state.undo.shift();
    $("btn-undo").disabled = false;
  }

  function undo() {
    const last = state.undo.pop();
    $("btn-undo").disabled = state.undo.length === 0;
    if (last === undefined) {
      setStatus("Nothing to undo.");
      return;
    }
    state.segments = JSON.parse(last).map(fromServer);
    if (state.selected !== null && boundaryIndex(state.selected) < 0) state.selected = null;
    changed();
    setStatus("Undone.");
  }

  function changed({ rows = true } = {}) {
    state.edits += 1;
    if (state.selected !== null && boundaryIndex(state.selected) < 0) state.selected = null;
    renderTimeline();
    if (rows) renderRows();
    else renderLabels();
    markDirty();
    scheduleCheck();
  }

  function split() {
    if (!state.detail) return;
    const f = state.frame;
    const i = segmentAt(f);
    if (i < 0) {
      setStatus(`Frame ${f} is in no segment (a gap): fix the gap first.`, "error");
      return;
    }
    const seg = state.segments[i];
    if (seg.start === f) {
      if (f === 0) setStatus("Frame 0 starts the episode: move the playhead to where the next subtask begins.");
      else {
        state.selected = f;
        renderTimeline();
        setStatus(`There is already a boundary at frame ${f}; it is selected.`);
      }
      return;
    }
    pushUndo();
    state.segments.splice(i + 1, 0, blank(f, seg.end));
    seg.end = f;
    state.selected = f;
    changed();
    setStatus(`Boundary at frame ${f}: segments ${i} and ${i + 1}.`);
  }

  function removeBoundary() {
    if (state.selected === null) {
      setStatus("Select a boundary first: click it on the timeline, or press , or . to jump to one.");
      return;
    }
    const i = boundaryIndex(state.selected);
    if (i < 0) return;
    pushUndo();
    const [left, right] = [state.segments[i], state.segments[i + 1]];
    const kept = left.template_id || !right.template_id ? left : right;
    state.segments.splice(i, 2, { ...kept, start: left.start, end: right.end, view: null });
    const where = state.selected;
    state.selected = null;
    changed();
    setStatus(`Boundary at frame ${where} removed: segments ${i} and ${i + 1} merged.`);
  }

  function moveBoundary(index, to) {
    const [left, right] = [state.segments[index], state.segments[index + 1]];
    const frame = Math.max(left.start + 1, Math.min(right.end - 1, Math.round(to)));
    if (frame === left.end) return false;
    left.end = frame;
    right.start = frame;
    state.selected = frame;
    return true;
  }

  function moveSelectedToPlayhead() {
    if (state.selected === null) {
      setStatus("Select a boundary first (click it, or , .), then M moves it to the playhead.");
      return;
    }
    const i = boundaryIndex(state.selected);
    const before = snapshot();
    if (i >= 0 && moveBoundary(i, state.frame)) {
      pushUndo(before);
      changed();
      setStatus(`Boundary moved to frame ${state.selected}.`);
    }
  }

  function jumpBoundary(direction) {
    const frames = boundaries().map((b) => b.frame);
    const target = direction > 0 ? frames.find((f) => f > state.frame) : [...frames].reverse().find((f) => f < state.frame);
    if (target === undefined) {
      setStatus(direction > 0 ? "No boundary after the playhead." : "No boundary before the playhead.");
      return;
    }
    state.selected = target;
    setFrame(target);
    renderTimeline();
  }

  // ---------------------------------------------------------------- episode list
  function listItem(row) {
    const line = h("span", { class: "line" });
    if (row.saved && row.saved.status === "proposed") {
      line.append(badge(`proposal · ${row.saved.annotator}`, "open"));
    } else if (row.saved) {
      line.append(badge(`v${row.saved.version} · ${row.saved.annotator}`, "success"));
      if (["accepted", "edited", "rejected"].includes(row.saved.status)) line.append(badge(row.saved.status));
      if (row.saved.reference) line.append(badge("reference", "resolved"));
    } else line.append(badge("not segmented"));
    const detail = row.saved ? `${row.length} frames · ${plural(row.saved.segments, "segment")}` : `${row.length} frames`;
    return episodeItem(row.episode, state.episode, line, detail, leaveTo);
  }

  async function loadList({ append = false } = {}) {
    const offset = append ? state.list.offset + state.list.limit : 0;
    const filter = $("only-unreviewed").checked ? "&filter=unreviewed" : "";
    const list = await api(`/api/segment/episodes?offset=${offset}${filter}`);
    state.list = list;
    state.rows = append ? state.rows.concat(list.episodes) : list.episodes;
    $("seg-episode-list").replaceChildren(...state.rows.map(listItem));
    $("segmented-count").textContent = list.filter ? `${list.unreviewed} to review` : `${list.segmented} / ${list.total}`;
    $("unreviewed-count").textContent = String(list.unreviewed);
    $("seg-load-more").hidden = state.rows.length >= list.total;
    return list;
  }

  function markActive() {
    highlightEpisode("#seg-episode-list a", state.episode);
  }

  // ---------------------------------------------------------------- episode
  function leaveTo(episode) {
    if (episode === null || episode === undefined) return;
    if (episode === state.episode) return;
    if (dirty() && state.pendingLeave !== episode) {
      state.pendingLeave = episode;
      history.replaceState(null, "", `#episode=${state.episode}`);
      setStatus(`Episode ${state.episode} has unsaved changes: S saves them; go to episode ${episode} again to discard them.`, "error");
      return;
    }
    state.pendingLeave = null;
    openEpisode(episode);
  }

  function step(delta) {
    if (!state.detail) return;
    const target = delta > 0 ? state.detail.next : state.detail.previous;
    if (target === null) setStatus(delta > 0 ? "This is the last episode." : "This is the first episode.");
    else leaveTo(target);
  }

  // the template set (cohort) the annotator picked stays across episodes and page loads;
  // a server started with another label set (--labels) starts from that one
  const COHORT_KEY = `strands-labels.cohort.${config.dataset || ""}.${config.default_cohort || ""}`;

  function chosenCohort() {
    const saved = localStorage.getItem(COHORT_KEY);
    return saved && (config.cohorts || []).includes(saved) ? saved : null;
  }

  function headerBadges() {
    const d = state.detail;
    const badges = [];
    if (d.record && d.status === "proposed") {
      badges.push(badge(`proposal by ${d.record.annotator}: awaiting review`, "open"));
    } else if (d.record) {
      badges.push(badge(`saved v${d.record.version} by ${d.record.annotator}`, "success"));
      if (d.record.review) badges.push(badge(`${d.record.review.decision} proposal of ${d.record.review.proposal.annotator}`));
      if (d.record.reference) badges.push(badge("reference example", "resolved"));
    } else badges.push(badge("not segmented yet"));
    badges.push(badge(`templates: ${d.cohort}`));
    return badges;
  }

  async function openEpisode(episode, { cohort = chosenCohort() } = {}) {
    const ticket = ++state.loadTicket;
    stopPlaying();
    try {
      const query = cohort ? `?cohort=${encodeURIComponent(cohort)}` : "";
      const [detail, series] = await Promise.all([
        api(`/api/segment/episodes/${episode}${query}`),
        api(`/api/episodes/${episode}/state`),
      ]);
      let segments = detail.record ? detail.record.segments.map(fromServer) : [blank(0, detail.length)];
      let prefilled = null;
      if (!detail.record && detail.base_velocity_feature) {
        try {
          const result = await api(`/api/segment/episodes/${episode}/prefill`);
          segments = result.segments.map(fromServer);
          prefilled = result;
        } catch (error) {
          prefilled = { error: error.message };
        }
      }
      if (ticket !== state.loadTicket) return;
      state.episode = episode;
      state.detail = detail;
      state.series = series;
      state.timestamps = series.timestamps;
      state.segments = segments;
      state.loaded = snapshot();
      state.undo = [];
      state.selected = null;
      state.findings = detail.findings;
      state.pendingLeave = null;
      state.prefetched = new Set();
      history.replaceState(null, "", `#episode=${episode}`);
      renderEpisode();
      setFrame(0);
      changed();
      markActive();
      if (prefilled && prefilled.error) setStatus(`Could not prefill from the base motion: ${prefilled.error}`, "error");
      else if (prefilled) {
        const n = segments.filter((s) => s.template_id === "N1").length;
        setStatus(`Prefilled ${plural(n, "NAVIGATE segment")} from ${prefilled.feature}: fill their destinations and label the rest.`);
      }
    } catch (error) {
      setStatus(`Could not open episode ${episode}: ${error.message}`, "error");
    }
  }

  function renderEpisode() {
    const d = state.detail;
    renderPlayer(headerBadges());
    $("cohort").value = d.cohort;
    $("reference").checked = Boolean(d.record && d.record.reference);
    $("seg-note").value = d.record && d.record.note ? d.record.note : "";
    renderProposal();
    $("btn-prefill").hidden = !d.base_velocity_feature;
    $("btn-prefill").title = d.base_velocity_feature
      ? `replace the segments with NAVIGATE segments where ${d.base_velocity_feature} moves`
      : "";
    setChoices(d);
    stripGroups();
    renderTicks();
    renderReferences();
  }

  function setChoices(d) {
    state.choices = new Map(d.choices.map((c) => [c.id, c]));
    const select = h("select", { class: "template", "aria-label": "template" }, h("option", { value: "" }, "— choose a template —"));
    const pool = d.choices.filter((c) => c.in_pool);
    const rest = d.choices.filter((c) => !c.in_pool);
    // a label of your own set is shown as itself (its id is "SET:label")
    const shown = (c) => (c.surface === c.id || c.id === `${d.cohort}:${c.surface}` ? c.surface : `${c.id} · ${c.surface}`);
    const option = (c) => h("option", { value: c.id }, `${shown(c)}${c.in_pool ? `  ×${c.count}` : ""}`);
    if (pool.length) select.append(h("optgroup", { label: "Label pool of this task" }, pool.map(option)));
    select.append(h("optgroup", { label: pool.length ? "All other templates" : `All ${d.cohort} templates` }, rest.map(option)));
    state.templateSelect = select;
    const lists = [];
    for (const [tid, slots] of Object.entries(d.suggestions || {})) {
      for (const [slot, values] of Object.entries(slots)) {
        lists.push(h("datalist", { id: `suggest-${tid}-${slot}` }, values.map((v) => h("option", { value: v }))));
      }
    }
    let holder = $("suggestions");
    if (!holder) {
      holder = h("div", { id: "suggestions", hidden: true });
      document.body.append(holder);
    }
    holder.replaceChildren(...lists);
  }

  async function changeCohort(cohort) {
    if (!state.detail) return;
    try {
      const detail = await api(`/api/segment/episodes/${state.episode}?cohort=${encodeURIComponent(cohort)}`);
      state.detail.cohort = detail.cohort;
      state.detail.choices = detail.choices;
      state.detail.suggestions = detail.suggestions;
      localStorage.setItem(COHORT_KEY, detail.cohort);
      $("ep-badges").replaceChildren(...headerBadges());
      setChoices(state.detail);
      changed();
      setStatus(`Cohort ${cohort}: the lists show its templates.`);
    } catch (error) {
      setStatus(`Could not switch the cohort: ${error.message}`, "error");
    }
  }

  async function prefill() {
    if (!state.detail) return;
    try {
      const result = await api(`/api/segment/episodes/${state.episode}/prefill`);
      pushUndo();
      state.segments = result.segments.map(fromServer);
      state.selected = null;
      changed();
      const n = state.segments.filter((s) => s.template_id === "N1").length;
      setStatus(`Prefilled ${plural(n, "NAVIGATE segment")} from ${result.feature} (Z undoes).`, "ok");
    } catch (error) {
      setStatus(`Could not prefill: ${error.message}`, "error");
    }
  }

  // ---------------------------------------------------------------- segment rows
  function slotControls(seg, index) {
    const choice = state.choices.get(seg.template_id);
    const out = [];
    if (choice) {
      for (const slot of choice.slots) {
        const listId = `suggest-${choice.id}-${slot.name}`;
        const input = h("input", {
          type: "text",
          class: "slot-input",
          placeholder: slot.types.join(", ").replaceAll("_", " "),
          list: document.getElementById(listId) ? listId : null,
          spellcheck: "false",
          autocomplete: "off",
          dataset: { slot: slot.name },
          "aria-label": `segment ${index} ${slot.name}`,
        });
        input.value = seg.slots[slot.name] || "";
        bindText(input, (value) => {
          seg.slots[slot.name] = value;
        });
        out.push(h("label", { class: "slot" }, h("span", {}, slot.name, slot.optional ? h("em", {}, " optional") : null), input));
      }
      for (const name of choice.modifiers) {
        const closed = (choice.values && choice.values[name]) || (name === "variant" ? Object.keys(choice.variants || {}) : null);
        let control;
        if (closed && closed.length) {
          control = h(
            "select",
            { class: "mod-input", dataset: { modifier: name }, "aria-label": `segment ${index} ${name}` },
            h("option", { value: "" }, "—"),
            closed.map((v) => {
              const meaning = name === "variant" && choice.variants && choice.variants[v] && choice.variants[v] !== v ? ` (${choice.variants[v]})` : "";
              return h("option", { value: v }, `${v}${meaning}`);
            }),
          );
          control.value = seg.modifiers[name] || "";
          bindChoice(control, (value) => {
            if (value) seg.modifiers[name] = value;
            else delete seg.modifiers[name];
          });
        } else {
          control = h("input", {
            type: "text",
            class: "mod-input",
            placeholder: PLACEHOLDERS[name] || "",
            spellcheck: "false",
            autocomplete: "off",
            dataset: { modifier: name },
            "aria-label": `segment ${index} ${name}`,
          });
          control.value = seg.modifiers[name] || "";
          bindText(control, (value) => {
            if (value) seg.modifiers[name] = value;
            else delete seg.modifiers[name];
          });
        }
        out.push(h("label", { class: "slot modifier" }, h("span", {}, name), control));
      }
    }
    const note = h("input", {
      type: "text",
      class: "note-input",
      placeholder: "optional",
      maxlength: "2000",
      "aria-label": `segment ${index} note`,
    });
    note.value = seg.note || "";
    bindText(note, (value) => {
      seg.note = value || null;
    });
    out.push(h("label", { class: "slot seg-note-field" }, h("span", {}, "note"), note));
    return out;
  }

  // a field edited in place: one undo step per visit, a check after each change
  function bindEdit(control, event, apply) {
    let before = null;
    control.addEventListener("focus", () => {
      before = snapshot();
    });
    control.addEventListener(event, () => {
      apply(control.value);
      changed({ rows: false });
    });
    control.addEventListener("blur", () => {
      if (before !== null && before !== snapshot()) pushUndo(before);
      before = null;
    });
    control.addEventListener("keydown", (event) => {
      if (event.key === "Enter") control.blur();
    });
  }

  function bindText(input, apply) {
    bindEdit(input, "input", apply);
  }

  function bindChoice(select, apply) {
    bindEdit(select, "change", apply);
  }

  function frameInput(seg, key, index) {
    const input = h("input", {
      type: "number",
      class: `frame-input ${key}`,
      min: "0",
      max: String(state.detail.length),
      step: "1",
      "aria-label": `segment ${index} ${key} frame`,
    });
    input.value = String(seg[key]);
    input.addEventListener("change", () => {
      const value = Number.parseInt(input.value, 10);
      if (!Number.isFinite(value) || value === seg[key]) {
        input.value = String(seg[key]);
        return;
      }
      pushUndo();
      seg[key] = value;
      sortSegments();
      changed();
      setStatus(`Segment ${index} now ${key === "start" ? "starts" : "ends"} at frame ${value}; only this segment changed.`);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") input.blur();
    });
    return input;
  }

  function buildRow(seg, index, current) {
    const select = state.templateSelect.cloneNode(true);
    select.value = seg.template_id && state.choices.has(seg.template_id) ? seg.template_id : "";
    select.setAttribute("aria-label", `segment ${index} template`);
    bindChoice(select, (value) => chooseTemplate(index, value));
    const row = h(
      "li",
      { class: `segment-row${index === current ? " current" : ""}`, dataset: { index } },
      h(
        "div",
        { class: "seg-head" },
        h("span", { class: "seg-swatch" }),
        h("span", { class: "seg-num" }, String(index)),
        h("span", { class: "frames" }, frameInput(seg, "start", index), h("span", { class: "dash" }, "–"), frameInput(seg, "end", index)),
        h("span", { class: "secs" }, `${seconds(seg.start)}–${seconds(seg.end)} s · ${seg.end - seg.start} fr`),
        select,
      ),
      h("div", { class: "seg-slots" }, slotControls(seg, index)),
      h("div", { class: "seg-label" }, h("span", { class: "arrow" }, "→"), h("span", { class: "rendered" }, ""), h("span", { class: "label-error" }, "")),
    );
    row.addEventListener("pointerdown", (event) => {
      if (event.target.closest("input, select, textarea, button, label")) return;
      stopPlaying();
      setFrame(Math.min(seg.start, state.detail.length - 1));
    });
    return row;
  }

  function renderRows() {
    const current = segmentAt(state.frame);
    $("segment-rows").replaceChildren(...state.segments.map((seg, index) => buildRow(seg, index, current)));
    $("segment-count").textContent = String(state.segments.length);
    renderLabels();
  }

  function renderLabels() {
    const rows = $("segment-rows").children;
    state.segments.forEach((seg, index) => {
      const row = rows[index];
      if (!row) return;
      const view = seg.view;
      const rendered = row.querySelector(".rendered");
      const error = row.querySelector(".label-error");
      if (seg.free && !seg.template_id) {
        rendered.textContent = seg.label;
        error.textContent = "free label: fits no template (kept as written; choose a template to check it)";
      } else if (!seg.template_id) {
        rendered.textContent = "";
        error.textContent = "choose a template";
      } else if (view) {
        rendered.textContent = view.label || "";
        error.textContent = view.error || "";
      }
      row.classList.toggle("unlabelled", !seg.template_id && !seg.free);
      row.classList.toggle("free-label", Boolean(seg.free && !seg.template_id));
      row.classList.toggle("invalid", Boolean(seg.template_id && view && view.error));
      row.querySelector(".seg-swatch").style.background = colorOf(seg.template_id) || "";
    });
  }

  // the template of one segment changed: keep the slots it shares with the new one
  function chooseTemplate(index, templateId) {
    const seg = state.segments[index];
    seg.template_id = templateId || null;
    if (seg.template_id) seg.free = false;
    seg.view = null;
    const choice = state.choices.get(seg.template_id);
    const slotNames = new Set(choice ? choice.slots.map((s) => s.name) : []);
    const modNames = new Set(choice ? choice.modifiers : []);
    seg.slots = Object.fromEntries(Object.entries(seg.slots).filter(([k]) => slotNames.has(k)));
    seg.modifiers = Object.fromEntries(Object.entries(seg.modifiers).filter(([k]) => modNames.has(k)));
    const row = $("segment-rows").children[index];
    if (row) row.querySelector(".seg-slots").replaceChildren(...slotControls(seg, index));
  }

  function focusTemplate() {
    const i = segmentAt(state.frame);
    if (i < 0) return;
    const select = $("segment-rows").children[i].querySelector("select.template");
    select.scrollIntoView({ block: "nearest" });
    select.focus();
  }

  // ---------------------------------------------------------------- timeline
  function pct(frame) {
    return `${(100 * frame) / state.detail.length}%`;
  }

  function renderTicks() {
    const length = state.detail.length;
    const tick = niceStep(length, 10);
    const ticks = [];
    for (let f = 0; f < length; f += tick) {
      const t = h("span", { class: "tl-tick" }, String(f));
      t.style.left = pct(f);
      ticks.push(t);
    }
    $("tl-ticks").replaceChildren(...ticks);
  }

  function band(f, where) {
    const node = h("div", {
      class: `tl-band ${f.kind} ${f.severity}${f.blocking ? " blocking" : ""}`,
      title: `${f.kind} [${f.start}, ${f.end}): ${f.message}`,
      dataset: { kind: f.kind, start: f.start, end: f.end, where },
    });
    node.style.left = pct(f.start);
    node.style.width = pct(f.end - f.start);
    return node;
  }

  function renderTimeline() {
    if (!state.detail) return;
    const current = segmentAt(state.frame);
    const blocks = state.segments.map((seg, index) => {
      const choice = state.choices.get(seg.template_id);
      const text =
        seg.view && seg.view.label ? seg.view.label : choice ? `${choice.id} · ${choice.operation}, slots to fill` : "no template";
      const block = h(
        "div",
        {
          class: `tl-seg${seg.template_id || seg.free ? "" : " unlabelled"}${index === current ? " current" : ""}`,
          title: `${index}: [${seg.start}, ${seg.end}) ${text}`,
          dataset: { index },
        },
        h("span", { class: "tl-num" }, String(index)),
        h("span", { class: "tl-text" }, text),
      );
      block.style.left = pct(seg.start);
      block.style.width = pct(Math.max(0, seg.end - seg.start));
      const color = colorOf(seg.template_id);
      if (color) block.style.setProperty("--seg-color", color);
      return block;
    });
    // gaps and overlaps lie over the segments; every other finding in the lane below
    const structural = state.findings.filter((f) => (f.kind === "gap" || f.kind === "overlap") && f.end > f.start);
    const handles = boundaries().map((b) => {
      const handle = h("div", {
        class: `tl-boundary${b.frame === state.selected ? " selected" : ""}`,
        title: `boundary at frame ${b.frame}: click to select, drag to move, Delete removes it`,
        dataset: { index: b.index, frame: b.frame },
        role: "button",
        "aria-label": `boundary at frame ${b.frame}`,
      });
      handle.style.left = pct(b.frame);
      return handle;
    });
    $("tl-track").replaceChildren(...blocks, ...structural.map((f) => band(f, "track")), ...handles);
    const lane = state.findings.filter((f) => f.severity !== "skipped" && f.end > f.start);
    $("tl-bands").replaceChildren(...lane.map((f) => band(f, "lane")));
    $("btn-remove").disabled = state.selected === null;
    placePlayhead();
    drawStrip();
  }

  function placePlayhead() {
    $("tl-playhead").style.left = pct(state.frame);
    $("tl-playhead-label").textContent = String(state.frame);
  }

  function markCurrent() {
    const at = segmentAt(state.frame);
    for (const block of $("tl-track").querySelectorAll(".tl-seg")) block.classList.toggle("current", Number(block.dataset.index) === at);
    for (const row of $("segment-rows").children) row.classList.toggle("current", Number(row.dataset.index) === at);
  }

  function frameAt(clientX, round = false) {
    const rect = $("tl-track").getBoundingClientRect();
    const raw = ((clientX - rect.left) / rect.width) * state.detail.length;
    return round ? Math.round(raw) : Math.floor(raw);
  }

  function bindTimeline() {
    const timeline = $("timeline");
    let drag = null; // {kind: "seek"} | {kind: "boundary", index, before, moved}
    timeline.addEventListener("pointerdown", (event) => {
      if (!state.detail || event.button !== 0) return;
      stopPlaying();
      const handle = event.target.closest(".tl-boundary");
      timeline.setPointerCapture(event.pointerId);
      if (handle) {
        state.selected = Number(handle.dataset.frame);
        drag = { kind: "boundary", index: Number(handle.dataset.index), before: snapshot(), moved: false };
        renderTimeline();
        return;
      }
      drag = { kind: "seek" };
      setFrame(frameAt(event.clientX));
    });
    timeline.addEventListener("pointermove", (event) => {
      if (!drag) return;
      if (drag.kind === "seek") setFrame(frameAt(event.clientX));
      else if (moveBoundary(drag.index, frameAt(event.clientX, true))) {
        drag.moved = true;
        renderTimeline();
      }
    });
    const end = () => {
      if (drag && drag.kind === "boundary" && drag.moved) {
        pushUndo(drag.before);
        changed();
        setStatus(`Boundary moved to frame ${state.selected}.`);
      }
      drag = null;
    };
    timeline.addEventListener("pointerup", end);
    timeline.addEventListener("pointercancel", end);
    window.addEventListener("resize", drawStrip);
  }

  // The state channels under the segments, each stretched to its own range. Channels are
  // grouped by name as on the review page (common.js chosenGroups: one choice per dataset,
  // shared by both pages); only the chosen state groups are drawn, so a 26-channel robot
  // shows a few readable lines, not 26 on top of each other.
  function stripGroups() {
    const series = state.series;
    const holder = $("strip-groups");
    if (!state.detail || !series || !series.has_state) {
      holder.replaceChildren();
      return;
    }
    const groups = series.groups.filter((g) => g.source === series.keys.state);
    if (!state.stripOn) state.stripOn = chosenGroups(series, { stateOnly: true });
    const chips = groupChips(series, groups, state.stripOn, () => {
      stripGroups();
      drawStrip();
    });
    holder.replaceChildren(...(groups.length > 1 ? chips : []));
  }

  function drawStrip() {
    const canvas = $("tl-strip");
    const series = state.series;
    if (!state.detail || !series || !series.has_state) {
      canvas.hidden = true;
      return;
    }
    canvas.hidden = false;
    const { g, width, height } = fitCanvas(canvas);
    const length = state.detail.length;
    const x = (f) => ((f + 0.5) / length) * width;
    const groups = series.groups.filter((group) => group.source === series.keys.state);
    const on = state.stripOn || chosenGroups(series, { stateOnly: true });
    const drawn = new Set(
      (groups.length > 1 ? groups.filter((group) => on.has(group.label)) : groups).flatMap((group) => group.channels),
    );
    canvas.dataset.channels = String(drawn.size);
    g.lineWidth = 1;
    g.globalAlpha = 0.45;
    series.channels.forEach((values, c) => {
      if (series.sources[c] !== series.keys.state || !drawn.has(c)) return;  // the chosen state groups only
      const [lo, hi] = extent(values);
      if (!(hi - lo > 1e-9)) return;
      g.strokeStyle = PALETTE[c % PALETTE.length];
      g.beginPath();
      let pen = false;
      values.forEach((v, f) => {
        if (v === null) {
          pen = false;
          return;
        }
        const y = 3 + (1 - (v - lo) / (hi - lo)) * (height - 6);
        if (pen) g.lineTo(x(f), y);
        else g.moveTo(x(f), y);
        pen = true;
      });
      g.stroke();
    });
    g.globalAlpha = 1;
    g.strokeStyle = "#9aa1ab";
    g.setLineDash([3, 3]);
    for (const b of boundaries()) {
      const bx = Math.round((b.frame / length) * width) + 0.5;
      g.beginPath();
      g.moveTo(bx, 0);
      g.lineTo(bx, height);
      g.stroke();
    }
    g.setLineDash([]);
  }

  // ---------------------------------------------------------------- frames
  const { setFrame, stopPlaying, togglePlay, frameKeys, bindPlayer, renderPlayer } = player(state, {
    label: (frame, last) => {
      const at = segmentAt(frame);
      return `frame ${frame} / ${last} · ${seconds(frame)} s${at >= 0 ? ` · segment ${at}` : " · no segment"}`;
    },
    onFrame: () => {
      placePlayhead();
      markCurrent();
    },
  });

  // ---------------------------------------------------------------- checks and findings
  let checkTimer = 0;
  function scheduleCheck() {
    clearTimeout(checkTimer);
    checkTimer = setTimeout(runCheck, CHECK_DELAY);
  }

  async function runCheck() {
    if (!state.detail) return;
    const edits = state.edits;
    const episode = state.episode;
    try {
      const result = await post(`/api/segment/episodes/${episode}/check`, {
        segments: state.segments.map(clean),
        cohort: $("cohort").value,
      });
      if (edits !== state.edits || episode !== state.episode) return; // edited meanwhile: a newer check follows
      result.segments.forEach((view, index) => {
        if (state.segments[index]) state.segments[index].view = view;
      });
      state.findings = result.findings;
      renderLabels();
      renderTimeline();
      renderFindings();
    } catch (error) {
      if (episode === state.episode) setStatus(`Could not check the segments: ${error.message}`, "error");
    }
  }

  function renderFindings() {
    const counts = { error: 0, warning: 0, skipped: 0 };
    const items = state.findings.map((f) => {
      counts[f.severity] += 1;
      const item = h(
        "li",
        { class: `finding ${f.severity}${f.blocking ? " blocking" : ""}`, dataset: { kind: f.kind, start: f.start, end: f.end } },
        h(
          "div",
          { class: "finding-head" },
          badge(f.severity, f.severity === "error" ? "failure" : f.severity === "warning" ? "open" : ""),
          h("span", { class: "kind" }, f.kind),
          h("span", { class: "range" }, `[${f.start}, ${f.end})`),
          f.blocking ? h("span", { class: "blocks" }, "blocks saving") : null,
        ),
        h("div", { class: "message" }, f.message),
      );
      item.addEventListener("click", () => {
        stopPlaying();
        setFrame(Math.min(f.start, state.detail.length - 1));
      });
      return item;
    });
    $("findings").replaceChildren(...items);
    $("findings-empty").hidden = items.length > 0;
    const parts = [];
    if (counts.error) parts.push(plural(counts.error, "error"));
    if (counts.warning) parts.push(plural(counts.warning, "warning"));
    if (counts.skipped) parts.push(`${counts.skipped} skipped`);
    $("findings-summary").textContent = parts.join(" · ");
  }

  function renderReferences() {
    const refs = state.detail.references || [];
    $("references-empty").hidden = refs.length > 0;
    const cards = refs.map((r) => {
      const length = r.length || Math.max(...r.segments.map((s) => s.end));
      const bar = h("div", { class: "ref-bar" });
      for (const s of r.segments) {
        const piece = h("span", { title: `[${s.start}, ${s.end}) ${s.label}` });
        piece.style.left = `${(100 * s.start) / length}%`;
        piece.style.width = `${(100 * (s.end - s.start)) / length}%`;
        const color = colorOf(s.template_id);
        if (color) piece.style.background = color;
        bar.append(piece);
      }
      const open = h("a", { href: `#episode=${r.episode_index}` }, "open");
      open.addEventListener("click", (event) => {
        event.preventDefault();
        leaveTo(r.episode_index);
      });
      return h(
        "div",
        { class: "reference" },
        h("div", { class: "ref-head" }, h("span", { class: "ep" }, `Episode ${r.episode_index}`), h("span", { class: "muted" }, `${r.annotator} · v${r.version}`), open),
        bar,
        h(
          "ol",
          { class: "ref-list" },
          r.segments.map((s) => h("li", {}, h("span", { class: "range" }, `${s.start}–${s.end}`), h("span", {}, s.label))),
        ),
      );
    });
    $("references").replaceChildren(...cards);
  }

  function markDirty() {
    document.body.classList.toggle("dirty", dirty());
  }

  // ---------------------------------------------------------------- proposals
  function renderProposal() {
    const d = state.detail;
    const waiting = Boolean(d.record && d.status === "proposed");
    $("proposal-card").hidden = !waiting;
    if (!waiting) return;
    const free = d.record.segments.filter((s) => s.free).length;
    $("proposal-text").textContent =
      `${plural(d.record.segments.length, "segment")} proposed by ${d.record.annotator}` +
      `${free ? ` (${plural(free, "free label")})` : ""}. A accepts it as it is; edit it and S saves your version; Reject keeps it out of the export.`;
  }

  async function decide(decision) {
    const d = state.detail;
    if (!d || state.busy || d.status !== "proposed") return;
    if (decision === "accept" && dirty()) {
      setStatus("The proposal has unsaved edits: S saves them as your version (Z undoes them first to accept it as it was).", "error");
      return;
    }
    state.busy = true;
    setStatus(`Episode ${d.episode}: ${decision === "accept" ? "accepting" : "rejecting"} the proposal…`, "busy");
    try {
      const who = annotator();
      const result = await post(`/api/segment/episodes/${d.episode}/review`, { decision, annotator: who, version: d.record.version });
      localStorage.setItem("labels.annotator", who);
      state.loaded = snapshot();
      const done = `Episode ${d.episode}: proposal ${result.record.review.decision} by ${result.record.annotator} (version ${result.record.version}).`;
      await loadList();
      const next = result.next_unreviewed;
      await openEpisode(next !== null && next !== undefined ? next : d.episode);
      setStatus(`${done}${next !== null && next !== undefined ? ` Next proposal: episode ${next}.` : " No proposal is left to review."}`, "ok");
    } catch (error) {
      setStatus(`Not reviewed: ${error.message}`, "error");
    } finally {
      state.busy = false;
    }
  }

  // ---------------------------------------------------------------- save
  async function save() {
    const d = state.detail;
    if (!d || state.busy) return;
    const body = {
      segments: state.segments.map(clean),
      annotator: annotator(),
      note: $("seg-note").value.trim() || null,
      reference: $("reference").checked,
      cohort: $("cohort").value,
    };
    state.busy = true;
    setStatus(`Saving episode ${d.episode}…`, "busy");
    try {
      const result = await post(`/api/segment/episodes/${d.episode}`, body);
      localStorage.setItem("labels.annotator", body.annotator);
      state.loaded = snapshot();
      markDirty();
      const warnings = result.findings.filter((f) => f.severity !== "skipped").length;
      const done =
        `Episode ${d.episode} saved: version ${result.record.version}, ${plural(result.record.segments.length, "segment")} ` +
        `by ${result.record.annotator} in ${result.saved_to}${warnings ? `, ${plural(warnings, "finding")} to review` : ""}.`;
      await loadList();
      const reviewed = result.record.review && result.next_unreviewed !== null && result.next_unreviewed !== undefined;
      if (reviewed) {
        await openEpisode(result.next_unreviewed);
        setStatus(`${done} Proposal ${result.record.review.decision}. Next proposal: episode ${result.next_unreviewed}.`, "ok");
      } else if (result.next_episode !== null && result.next_episode !== undefined) {
        await openEpisode(result.next_episode);
        setStatus(`${done} Next: episode ${result.next_episode}.`, "ok");
      } else {
        await openEpisode(d.episode);
        setStatus(`${done} Every episode is segmented.`, "ok");
      }
    } catch (error) {
      if (error.body && Array.isArray(error.body.findings)) {
        state.findings = error.body.findings;
        renderTimeline();
        renderFindings();
        const first = error.body.findings[0];
        const where = first ? ` ${first.kind} at frames [${first.start}, ${first.end})` : "";
        setStatus(`Not saved (nothing changed):${where}${error.body.findings.length > 1 ? ` and ${error.body.findings.length - 1} more` : ""}. See the findings.`, "error");
        scheduleCheck(); // adds the warnings back beside the refusal's findings
      } else {
        setStatus(`Not saved: ${error.message}`, "error");
      }
    } finally {
      state.busy = false;
    }
  }

  // ---------------------------------------------------------------- keyboard
  function keyMap(event) {
    return {
      a: () => decide("accept"),
      b: split,
      s: save,
      z: undo,
      m: moveSelectedToPlayhead,
      t: focusTemplate,
      n: () => step(1),
      j: () => step(1),
      k: () => step(-1),
      ",": () => jumpBoundary(-1),
      ".": () => jumpBoundary(1),
      "/": () => $("seg-note").focus(),
      Delete: removeBoundary,
      Backspace: removeBoundary,
      Escape: () => {
        state.selected = null;
        renderTimeline();
      },
      ...frameKeys(event),
    };
  }

  // Ctrl+Z / Cmd+Z undoes too, outside a field (inside one it is the field's own undo)
  function modifiedKey(event) {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "z" && !isTyping(event.target)) {
      event.preventDefault();
      undo();
    }
  }

  // ---------------------------------------------------------------- start
  async function start() {
    $("annotator").value = localStorage.getItem("labels.annotator") || config.annotator;
    bindKeys(keyMap, { modified: modifiedKey });
    bindTimeline();
    bindPlayer();
    const button = (id, action) =>
      $(id).addEventListener("click", () => {
        $(id).blur();
        action();
      });
    button("btn-split", split);
    button("btn-remove", removeBoundary);
    button("btn-undo", undo);
    button("btn-prefill", prefill);
    button("btn-save", save);
    button("btn-accept", () => decide("accept"));
    button("btn-reject", () => decide("reject"));
    $("only-unreviewed").addEventListener("change", () => {
      $("only-unreviewed").blur();
      loadList().then(markActive);
    });
    $("cohort").addEventListener("change", () => {
      $("cohort").blur();
      changeCohort($("cohort").value);
    });
    $("reference").addEventListener("change", () => $("reference").blur());
    $("seg-load-more").addEventListener("click", () => loadList({ append: true }).then(markActive));
    onEpisodeHash(state, leaveTo);
    // closing or reloading the tab with unsaved segments asks first (the browser's own dialog)
    window.addEventListener("beforeunload", (event) => {
      if (!dirty()) return;
      event.preventDefault();
      event.returnValue = "";
    });
    try {
      const list = await loadList();
      const wanted = episodeFromHash();
      const first = wanted !== null ? wanted : list.first_unsegmented !== null ? list.first_unsegmented : state.rows.length ? state.rows[0].episode : null;
      if (first !== null) await openEpisode(first);
      else $("no-episode").textContent = "This dataset has no episode.";
    } catch (error) {
      setStatus(`Could not load the episodes: ${error.message}`, "error");
    }
  }

  start();
})();
