// Review page: queue, frame scrubber, state plot, decisions with keyboard shortcuts.
// Hand-written, no build step, no dependencies; the helpers and the frame player shared with
// the segment page are in common.js. Every text from the server is set with textContent
// (never innerHTML), so labels and notes cannot inject markup.
"use strict";

(() => {
  const {
    config, $, h, api, post, setStatus, badge,
    episodeFromHash, onEpisodeHash, episodeItem, highlightEpisode, bindKeys,
    fitCanvas, extent, niceStep, player, chosenGroups, groupChips,
  } = window.StrandsLabels;

  const PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#8c6d31", "#7b4173", "#3182bd",
    "#e6550d", "#31a354", "#756bb1", "#636363",
  ];
  const DECISION_WORDS = {
    uphold_verdict: "verdict upheld",
    overrule_verdict: "verdict overruled",
    grade_only: "graded",
  };

  const state = {
    queue: null,
    listed: [], // rows of "All episodes" shown so far
    filters: {},
    offset: 0,
    episode: null,
    detail: null,
    series: null,
    frame: 0,
    playing: false,
    hidden: new Set(),
    busy: false,
    prefetched: new Set(),
    loadToken: 0,
    loading: null, // episode being fetched
  };

  // ---------------------------------------------------------------- helpers
  function fmtTime(epochSeconds) {
    if (typeof epochSeconds !== "number") return "";
    return new Date(epochSeconds * 1000).toLocaleString();
  }

  function reviewer() {
    return $("reviewer").value.trim() || config.reviewer;
  }

  // ---------------------------------------------------------------- queue
  function rowItem(row) {
    const line = h("span", { class: "line" });
    if (row.verdict) line.append(badge(row.verdict, row.verdict));
    else line.append(badge("no verdict"));
    if (row.opinion) line.append(badge(`judge: ${row.opinion}`, row.dispute ? "open" : ""));
    if (row.dispute === "resolved") line.append(badge(row.overruled ? "overruled" : "upheld", "resolved"));
    else if (row.review === "grade_only") line.append(badge("graded", "resolved"));
    const detail = [row.quality, row.failure_mode].filter(Boolean).join(" · ") || "not graded";
    return episodeItem(row.episode, state.episode, line, `${detail} · ${row.length} frames`, openEpisode);
  }

  function queueParams(offset) {
    const params = new URLSearchParams({ offset: String(offset) });
    for (const [name, value] of Object.entries(state.filters)) if (value) params.set(name, value);
    return params;
  }

  async function loadQueue({ append = false } = {}) {
    const offset = append ? state.offset + (state.queue ? state.queue.limit : 0) : 0;
    const queue = await api(`/api/queue?${queueParams(offset)}`);
    state.queue = queue;
    state.offset = offset;
    state.listed = append ? state.listed.concat(queue.episodes) : queue.episodes;
    renderQueue();
    return queue;
  }

  function renderQueue() {
    const queue = state.queue;
    const disputes = $("dispute-list");
    disputes.replaceChildren(...queue.disputes.map(rowItem));
    $("dispute-empty").hidden = queue.disputes.length > 0;
    const count = $("dispute-count");
    count.textContent = String(queue.counts.open);
    count.classList.toggle("has", queue.counts.open > 0);
    $("episode-list").replaceChildren(...state.listed.map(rowItem));
    const filtered = Object.values(state.filters).some(Boolean);
    $("episode-count").textContent = filtered ? `${queue.matched} of ${queue.total}` : String(queue.total);
    $("load-more").hidden = state.listed.length >= queue.matched;
  }

  function markActive() {
    highlightEpisode(".episode-list a", state.episode);
  }

  function navigationOrder() {
    const order = [];
    const seen = new Set();
    for (const row of [...(state.queue ? state.queue.disputes : []), ...state.listed]) {
      if (!seen.has(row.episode)) {
        seen.add(row.episode);
        order.push(row.episode);
      }
    }
    return order;
  }

  function step(delta) {
    const order = navigationOrder();
    if (!order.length) return;
    const at = order.indexOf(state.episode);
    const next = at < 0 ? 0 : Math.min(order.length - 1, Math.max(0, at + delta));
    if (order[next] !== state.episode) openEpisode(order[next]);
    else setStatus(delta > 0 ? "This is the last episode in the queue." : "This is the first episode in the queue.");
  }

  // ---------------------------------------------------------------- episode
  async function openEpisode(episode, { reload = false } = {}) {
    if (!reload && (episode === state.loading || (state.loading === null && episode === state.episode))) return;
    const ticket = ++state.loadToken;
    state.loading = episode;
    stopPlaying();
    try {
      const [detail, series] = await Promise.all([
        api(`/api/episodes/${episode}`),
        api(`/api/episodes/${episode}/state`),
      ]);
      if (ticket !== state.loadToken) return;
      state.loading = null;
      state.episode = episode;
      state.detail = detail;
      state.series = series;
      state.timestamps = series.timestamps;
      state.prefetched = new Set();
      history.replaceState(null, "", `#episode=${episode}`);
      renderEpisode();
      setFrame(0);
      markActive();
    } catch (error) {
      if (ticket === state.loadToken) state.loading = null;
      setStatus(`Could not open episode ${episode}: ${error.message}`, "error");
    }
  }

  function renderEpisode() {
    const d = state.detail;
    const row = d.row;
    const badges = [];
    if (row.verdict) badges.push(badge(`verdict ${row.verdict}`, row.verdict));
    if (row.opinion) badges.push(badge(`judge says ${row.opinion}`, row.dispute === "open" ? "open" : ""));
    if (row.dispute === "open") badges.push(badge("dispute open", "open"));
    if (row.dispute === "resolved") badges.push(badge(row.overruled ? "overruled by a human" : "upheld by a human", "resolved"));
    if (row.review_outdated) badges.push(badge("review outdated", "open"));
    renderPlayer(badges, "The state plot below still works.");
    renderCards();
    renderLegend();
    $("plot-empty").hidden = state.series.has_state;
    $("state-plot").hidden = !state.series.has_state;
    resetForm();
  }

  function outcome(parent, word, facts) {
    const known = word === "success" || word === "failure";
    parent.replaceChildren(
      h("div", { class: `word ${known ? word : "none"}` }, word),
      h("div", { class: "facts" }, facts),
    );
  }

  function renderCards() {
    const d = state.detail;
    const det = d.deterministic;
    if (det) {
      const facts = [];
      if (det.steps !== undefined) facts.push(`${det.steps} steps`);
      if (det.cumulative_reward !== undefined) facts.push(`reward ${det.cumulative_reward}`);
      if (d.row.overruled) facts.push(`filters use ${d.row.effective_verdict}`);
      outcome($("verdict-body"), det.success ? "success" : "failure", facts.join(" · "));
    } else {
      outcome($("verdict-body"), "not recorded", "nothing to review yet");
    }

    const judge = d.judge;
    const note = $("judge-note");
    if (judge) {
      const opinion = judge.success_opinion === null || judge.success_opinion === undefined
        ? "no opinion"
        : judge.success_opinion ? "success" : "failure";
      outcome($("judge-body"), opinion, `quality ${judge.quality} · ${judge.failure_mode || "no failure mode"}`);
      note.textContent = judge.note || "(no note)";
      note.hidden = false;
      $("judge-meta").textContent = [judge.model, fmtTime(judge.labeled_at)].filter(Boolean).join(" · ");
    } else {
      outcome($("judge-body"), "not judged", "no judge label yet");
      note.hidden = true;
      $("judge-meta").textContent = "";
    }

    const review = $("review-body");
    const current = d.review || d.outdated_review;
    if (current) {
      const parts = [
        h("span", { class: "decision-word" }, (DECISION_WORDS[current.decision] || current.decision) + (d.review ? "" : " (outdated: a new verdict was recorded since)")),
        ` by ${current.reviewer}, ${fmtTime(current.reviewed_at)}`,
      ];
      const grade = [];
      if (current.quality) grade.push(`quality ${current.quality}`);
      if (current.quality || current.failure_mode) grade.push(current.failure_mode || "no failure mode");
      if (grade.length) parts.push(h("div", { class: "facts muted" }, grade.join(" · ")));
      if (current.note) parts.push(h("div", { class: "note" }, current.note));
      if (d.review_history.length) parts.push(h("div", { class: "meta-line" }, `${d.review_history.length} earlier review(s) kept as history`));
      review.replaceChildren(...parts);
    } else {
      review.replaceChildren(h("span", { class: "muted" }, "No human review yet."));
    }

    const disputed = d.row.dispute !== null && d.row.dispute !== undefined;
    $("btn-uphold").disabled = !disputed || !det;
    $("btn-overrule").disabled = !disputed || !det;
    $("btn-grade").disabled = !det;
  }

  function resetForm() {
    const d = state.detail;
    $("note").value = "";
    $("quality").value = d.review && d.review.quality ? d.review.quality : "";
    $("failure-mode").value = d.review && d.review.failure_mode ? d.review.failure_mode : "";
  }

  // ---------------------------------------------------------------- frames
  const { setFrame, stopPlaying, togglePlay, frameKeys, bindPlayer, renderPlayer } = player(state, {
    label: (frame, last) => `frame ${frame} / ${last} · ${timestampOf(frame).toFixed(2)} s`,
    onFrame: () => {
      drawPlot();
      updateLegendValues();
    },
  });

  function timestampOf(frame) {
    const t = state.series && state.series.timestamps[frame];
    return typeof t === "number" ? t : frame / state.detail.fps;
  }

  // ---------------------------------------------------------------- plot
  const plot = { pad: { left: 10, right: 10, top: 20, bottom: 22 }, ranges: [], shared: [0, 1], perChannel: false };

  function channelRange(values) {
    const [lo, hi] = extent(values);
    if (lo === Infinity) return [0, 1];
    if (hi - lo < 1e-9) return [lo - 0.5, hi + 0.5];
    return [lo, hi];
  }

  // Channel groups (by name prefix, per feature: state, then action) are picked
  // above the per-channel chips; only the channels of the groups shown get a chip. The choice
  // is kept per dataset (common.js chosenGroups, shared with the segment page's state lane).
  // The shared axis spans the channels shown.
  function channelKey(c) {
    const series = state.series;
    return `${series.sources[c]}:${series.names[c]}`;
  }

  function groupsShown() {
    if (!state.groupsOn) state.groupsOn = chosenGroups(state.series);
    return state.series.groups;
  }

  function channelShown(c) {
    return state.channelGroupOn[c] && !state.hidden.has(channelKey(c));
  }

  function updateRanges() {
    const series = state.series;
    plot.ranges = series.channels.map(channelRange);
    const shown = series.channels.filter((_, c) => channelShown(c));
    plot.shared = channelRange((shown.length ? shown : series.channels).flat());
  }

  function renderLegend() {
    const series = state.series;
    const groups = groupsShown();
    state.channelGroupOn = series.channels.map(() => false);
    for (const group of groups) {
      if (state.groupsOn.has(group.label)) for (const c of group.channels) state.channelGroupOn[c] = true;
    }
    updateRanges();
    const chipsOfGroups = groupChips(series, groups, state.groupsOn, () => {
      renderLegend();
      updateLegendValues();
      drawPlot();
    });
    const chips = [];
    series.names.forEach((name, c) => {
      if (!state.channelGroupOn[c]) return;
      const key = channelKey(c);
      const chip = h(
        "button",
        { type: "button", class: state.hidden.has(key) ? "off" : "", title: `${name}: click to hide or show` },
        h("span", { class: "swatch" }),
        h("span", {}, name),
        h("span", { class: "value", dataset: { channel: c } }, ""),
      );
      chip.querySelector(".swatch").style.background = PALETTE[c % PALETTE.length];
      chip.addEventListener("click", () => {
        if (state.hidden.has(key)) state.hidden.delete(key);
        else state.hidden.add(key);
        chip.classList.toggle("off");
        updateRanges();
        drawPlot();
      });
      chips.push(chip);
    });
    if (!chips.length) chips.push(h("span", { class: "muted" }, "No channel group chosen: pick one above."));
    $("channel-groups").replaceChildren(...chipsOfGroups);
    $("legend").replaceChildren(...chips);
  }

  function updateLegendValues() {
    if (!state.series) return;
    for (const span of document.querySelectorAll("#legend .value")) {
      const v = state.series.channels[Number(span.dataset.channel)][state.frame];
      span.textContent = v === null || v === undefined ? "—" : Number(v).toPrecision(4);
    }
  }

  function xOf(frame, width) {
    const n = Math.max(1, state.detail.length - 1);
    return plot.pad.left + (frame / n) * (width - plot.pad.left - plot.pad.right);
  }

  function frameAt(clientX) {
    const canvas = $("state-plot");
    const rect = canvas.getBoundingClientRect();
    const inner = rect.width - plot.pad.left - plot.pad.right;
    const share = (clientX - rect.left - plot.pad.left) / inner;
    return share * (state.detail.length - 1);
  }

  function drawPlot() {
    const canvas = $("state-plot");
    if (!state.series || !state.series.has_state || canvas.hidden) return;
    const { g, width, height } = fitCanvas(canvas);
    plot.pad.left = plot.perChannel ? 10 : 48;
    const { top, bottom } = plot.pad;
    const plotH = height - top - bottom;
    const length = state.detail.length;

    // frame ticks
    g.font = "11px system-ui, sans-serif";
    g.fillStyle = "#6b7380";
    g.strokeStyle = "#eef0f3";
    g.lineWidth = 1;
    g.textAlign = "center";
    const tick = niceStep(length, 8);
    for (let f = 0; f < length; f += tick) {
      const x = Math.round(xOf(f, width)) + 0.5;
      g.beginPath();
      g.moveTo(x, top);
      g.lineTo(x, top + plotH);
      g.stroke();
      g.fillText(String(f), x, height - 6);
    }

    // value axis (shared scale only: per-channel lines have no common unit)
    if (!plot.perChannel) {
      const [lo, hi] = plot.shared;
      g.textAlign = "right";
      for (const share of [0, 0.5, 1]) {
        const y = Math.round(top + plotH - share * plotH) + 0.5;
        g.beginPath();
        g.moveTo(plot.pad.left, y);
        g.lineTo(width - plot.pad.right, y);
        g.stroke();
        g.fillText(Number(lo + share * (hi - lo)).toPrecision(3), plot.pad.left - 6, y + 4);
      }
      g.textAlign = "center";
    }

    // sampled frames
    g.save();
    g.setLineDash([4, 4]);
    g.strokeStyle = "#9aa1ab";
    for (const f of state.series.sampled_frames) {
      const x = Math.round(xOf(f, width)) + 0.5;
      g.beginPath();
      g.moveTo(x, top);
      g.lineTo(x, top + plotH);
      g.stroke();
    }
    g.restore();

    // channels
    g.lineWidth = 1.4;
    g.lineJoin = "round";
    state.series.channels.forEach((values, c) => {
      if (!channelShown(c)) return;
      const [lo, hi] = plot.perChannel ? plot.ranges[c] : plot.shared;
      g.strokeStyle = PALETTE[c % PALETTE.length];
      g.beginPath();
      let pen = false;
      for (let f = 0; f < values.length; f += 1) {
        const v = values[f];
        if (v === null) {
          pen = false;
          continue;
        }
        const x = xOf(f, width);
        const y = top + plotH - ((v - lo) / (hi - lo)) * plotH;
        if (pen) g.lineTo(x, y);
        else g.moveTo(x, y);
        pen = true;
      }
      g.stroke();
    });

    // shown frame
    const x = Math.round(xOf(state.frame, width)) + 0.5;
    g.strokeStyle = "#1d2330";
    g.lineWidth = 1.5;
    g.beginPath();
    g.moveTo(x, top - 4);
    g.lineTo(x, top + plotH);
    g.stroke();
    const label = `frame ${state.frame}`;
    g.font = "600 11px system-ui, sans-serif";
    const w = g.measureText(label).width + 10;
    const lx = Math.min(Math.max(x - w / 2, 0), width - w);
    g.fillStyle = "#1d2330";
    g.fillRect(lx, 0, w, 15);
    g.fillStyle = "#ffffff";
    g.textAlign = "left";
    g.fillText(label, lx + 5, 11);
  }

  function bindPlot() {
    const canvas = $("state-plot");
    let dragging = false;
    canvas.addEventListener("pointerdown", (event) => {
      if (!state.detail) return;
      dragging = true;
      canvas.setPointerCapture(event.pointerId);
      stopPlaying();
      setFrame(frameAt(event.clientX));
    });
    canvas.addEventListener("pointermove", (event) => {
      if (dragging) setFrame(frameAt(event.clientX));
    });
    canvas.addEventListener("pointerup", () => {
      dragging = false;
    });
    window.addEventListener("resize", drawPlot);
    const choose = (perChannel) => {
      plot.perChannel = perChannel;
      $("scale-each").classList.toggle("on", perChannel);
      $("scale-shared").classList.toggle("on", !perChannel);
      drawPlot();
    };
    $("scale-shared").addEventListener("click", () => choose(false));
    $("scale-each").addEventListener("click", () => choose(true));
  }

  // ---------------------------------------------------------------- decisions
  async function decide(decision) {
    const d = state.detail;
    if (!d || state.busy) return;
    if (!d.deterministic) {
      setStatus(`Episode ${d.episode} has no verdict recorded, so there is nothing to review.`, "error");
      return;
    }
    if (decision !== "grade_only" && !d.row.dispute) {
      setStatus(`Episode ${d.episode} has no disputed verdict: use Grade only (G) to record a grade.`, "error");
      return;
    }
    const body = {
      decision,
      note: $("note").value,
      reviewer: reviewer(),
      quality: $("quality").value || null,
      failure_mode: $("failure-mode").value || null,
      // the stamps of the verdict and judge label this page showed: a change since is refused (409)
      verdict_seen: d.stamps ? d.stamps.verdict_seen : null,
      judge_seen: d.stamps ? d.stamps.judge_seen : null,
    };
    state.busy = true;
    setStatus(`Saving episode ${d.episode}…`, "busy");
    try {
      const result = await post(`/api/episodes/${d.episode}/review`, body);
      localStorage.setItem("labels.reviewer", body.reviewer);
      await loadQueue();
      const done = `Episode ${d.episode}: ${DECISION_WORDS[decision]} by ${body.reviewer}, saved to ${config.labels_file}.`;
      if (result.next_dispute !== null && result.next_dispute !== undefined) {
        await openEpisode(result.next_dispute);
        setStatus(`${done} Next open dispute: episode ${result.next_dispute}.`, "ok");
      } else {
        await openEpisode(d.episode, { reload: true });
        setStatus(`${done} No open disputes left.`, "ok");
      }
    } catch (error) {
      if (error.status === 409 && error.body && /changed since the page showed it/.test(error.message)) {
        await openEpisode(d.episode, { reload: true });
        $("note").value = body.note; // what was typed stays, to decide again on what is shown now
        setStatus(`Not saved: ${error.message} The episode was reloaded.`, "error");
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
      u: () => decide("uphold_verdict"),
      o: () => decide("overrule_verdict"),
      g: () => decide("grade_only"),
      n: () => step(1),
      j: () => step(1),
      k: () => step(-1),
      "/": () => $("note").focus(),
      1: () => ($("quality").value = "low"),
      2: () => ($("quality").value = "medium"),
      3: () => ($("quality").value = "high"),
      0: () => ($("quality").value = ""),
      ...frameKeys(event),
    };
  }

  // ---------------------------------------------------------------- start
  async function start() {
    $("reviewer").value = localStorage.getItem("labels.reviewer") || config.reviewer;
    bindKeys(keyMap);
    bindPlot();
    bindPlayer();
    for (const button of document.querySelectorAll(".buttons button")) {
      button.addEventListener("click", () => {
        button.blur();
        decide(button.dataset.decision);
      });
    }
    for (const select of document.querySelectorAll(".filters select")) {
      select.addEventListener("change", async () => {
        state.filters[select.dataset.filter] = select.value;
        select.blur();
        try {
          await loadQueue();
          markActive();
        } catch (error) {
          setStatus(`Could not filter: ${error.message}`, "error");
        }
      });
    }
    for (const select of document.querySelectorAll(".decide select")) {
      select.addEventListener("change", () => select.blur());
    }
    $("load-more").addEventListener("click", () => loadQueue({ append: true }).then(markActive));
    onEpisodeHash(state, openEpisode);
    // pick up labels written meanwhile (a judge running on the same dataset)
    setInterval(() => {
      if (document.hidden || state.busy || state.offset !== 0) return;
      loadQueue().then(markActive).catch(() => {});
    }, 15000);
    try {
      const queue = await loadQueue();
      const wanted = episodeFromHash();
      const first = wanted !== null ? wanted : queue.disputes.length ? queue.disputes[0].episode : state.listed.length ? state.listed[0].episode : null;
      if (first !== null) await openEpisode(first);
      if (!queue.disputes.length) setStatus("No open disputes. Pick any episode to grade it.");
    } catch (error) {
      setStatus(`Could not load the queue: ${error.message}`, "error");
    }
  }

  start();
})();
