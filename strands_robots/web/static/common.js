// Shared by the review and segment pages (loaded first by base.html): DOM and fetch helpers,
// the status line, keyboard dispatch, the episode list link and the frame player of
// templates/_player.html. Hand-written, no build step, no dependencies. Every text from the
// server is set with textContent (never innerHTML), so labels and notes cannot inject markup.
"use strict";

window.StrandsLabels = (() => {
  const config = JSON.parse(document.getElementById("page-config").textContent);
  const token = document.querySelector('meta[name="labels-token"]').content;
  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------- DOM and fetch
  function h(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // JSON of a same-origin request; a refusal throws an Error carrying the server's body and status
  async function api(path, options = {}) {
    const response = await fetch(path, { credentials: "same-origin", ...options });
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    if (!response.ok) {
      const error = new Error((body && body.error) || `${response.status} ${response.statusText}`);
      error.body = body;
      error.status = response.status;
      throw error;
    }
    return body;
  }

  // a write: JSON body and the per-run token the server asks of every POST
  function post(path, body) {
    return api(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Labels-Token": token },
      body: JSON.stringify(body),
    });
  }

  function setStatus(text, kind = "") {
    const status = $("status");
    status.textContent = text;
    status.className = `status ${kind}`;
    if (kind === "ok" || kind === "error") {
      void status.offsetWidth; // restart the flash animation
      status.classList.add("flash");
    }
  }

  function badge(text, kind = "") {
    return h("span", { class: `badge ${kind}` }, text);
  }

  // ---------------------------------------------------------------- episodes
  function episodeFromHash() {
    const match = /episode=(\d+)/.exec(location.hash);
    return match ? Number(match[1]) : null;
  }

  // open the episode a changed #episode=N names, unless it is the one shown
  function onEpisodeHash(state, open) {
    window.addEventListener("hashchange", () => {
      const wanted = episodeFromHash();
      if (wanted !== null && wanted !== state.episode) open(wanted);
    });
  }

  // one entry of an episode list: number, a line of badges, a detail line; a click opens it
  function episodeItem(episode, current, line, detail, open) {
    const link = h(
      "a",
      { href: `#episode=${episode}`, dataset: { episode }, class: episode === current ? "active" : "" },
      h("span", { class: "ep" }, `#${episode}`),
      line,
      h("span", { class: "detail" }, detail),
    );
    link.addEventListener("click", (event) => {
      event.preventDefault();
      open(episode);
    });
    return h("li", {}, link);
  }

  function highlightEpisode(selector, episode) {
    for (const link of document.querySelectorAll(selector)) {
      link.classList.toggle("active", Number(link.dataset.episode) === episode);
    }
  }

  // ---------------------------------------------------------------- keyboard
  function isTyping(target) {
    return (
      target instanceof HTMLElement &&
      (target.matches("textarea, select, input:not([type=range]):not([type=button]):not([type=checkbox])") || target.isContentEditable)
    );
  }

  // Page shortcuts: `handlersFor(event)` maps keys (or their lower case) to actions. Keys typed
  // into a field stay there (Esc leaves the field); Ctrl, Meta and Alt chords go to `modified`.
  function bindKeys(handlersFor, { modified = null } = {}) {
    document.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey) {
        if (modified) modified(event);
        return;
      }
      if (isTyping(event.target)) {
        // Esc leaves any field; Enter leaves a one-line field and a note (Shift+Enter: a new line)
        const multiline = event.target.tagName === "TEXTAREA";
        if (event.key === "Escape" || (event.key === "Enter" && !(multiline && event.shiftKey) && !event.isComposing)) {
          if (event.key === "Enter") event.preventDefault();
          event.target.blur();
        }
        return;
      }
      const key = event.key;
      const handlers = handlersFor(event);
      const handler = handlers[key] || handlers[key.toLowerCase()];
      if (!handler) return;
      event.preventDefault();
      handler();
    });
  }

  // ---------------------------------------------------------------- canvas
  // the 2-D context of a canvas sized to its box at the device pixel ratio, cleared
  function fitCanvas(canvas) {
    const dpr = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
    }
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    return { g, width, height };
  }

  // [min, max] of a channel's values, nulls skipped ([Infinity, -Infinity] when all are null)
  function extent(values) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of values) {
      if (v === null) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    return [lo, hi];
  }

  // a round frame step (1, 2, 5 x 10^k) giving about `count` ticks over `length` frames
  function niceStep(length, count) {
    const raw = length / count;
    const base = 10 ** Math.floor(Math.log10(Math.max(1, raw)));
    for (const m of [1, 2, 5, 10]) if (base * m >= raw) return base * m;
    return base * 10;
  }

  // ---------------------------------------------------------------- player
  // The episode head, camera frames, scrubber and play button of templates/_player.html, over
  // the page's `state` (detail, episode, frame, playing, prefetched). `label(frame, last)` is
  // the text beside the slider; `onFrame()` redraws what follows the shown frame.
  function player(state, { label, onFrame }) {
    let prefetchTimer = 0;
    let playTimer = 0;

    function frameUrl(camera, frame) {
      return `/api/episodes/${state.episode}/frames/${camera}/${frame}.jpg`;
    }

    function setFrame(frame) {
      if (!state.detail) return;
      const last = state.detail.length - 1;
      state.frame = Math.max(0, Math.min(last, Math.round(frame)));
      $("frame-slider").value = String(state.frame);
      $("frame-label").textContent = label(state.frame, last);
      for (const img of document.querySelectorAll("#cameras img")) {
        const url = frameUrl(img.dataset.camera, state.frame);
        if (img.getAttribute("src") !== url) img.src = url;
      }
      onFrame();
      schedulePrefetch();
    }

    // Ask the browser for every available camera's frames after the current one, up to
    // frame `end` (exclusive), each URL once.
    function prefetchUntil(end) {
      for (const camera of state.detail.cameras) {
        if (!camera.available) continue;
        for (let f = state.frame + 1; f < end; f += 1) {
          const url = frameUrl(camera.index, f);
          if (state.prefetched.has(url)) continue;
          state.prefetched.add(url);
          new Image().src = url;
        }
      }
    }

    function schedulePrefetch() {
      clearTimeout(prefetchTimer);
      prefetchTimer = setTimeout(() => {
        if (!state.detail) return;
        prefetchUntil(Math.min(state.detail.length, state.frame + 24));
      }, 180);
    }

    function stopPlaying() {
      state.playing = false;
      cancelAnimationFrame(playTimer);
      $("play").textContent = "\u25B6\uFE0E";
      $("play").setAttribute("aria-label", "play");
    }

    // Real-time playback: the shown frame follows the wall clock through the episode's
    // timestamps (times the speed). A frame whose image has not arrived yet is skipped
    // rather than waited for, so a slow network drops frames but never slows time.
    function speed() {
      const value = Number($("speed") ? $("speed").value : 1);
      return value > 0 ? value : 1;
    }

    function timeOf(frame) {
      const t = state.timestamps && state.timestamps[frame];
      return typeof t === "number" ? t : frame / state.detail.fps;
    }

    function frameAtTime(seconds) {
      const last = state.detail.length - 1;
      if (!state.timestamps) return Math.min(last, Math.floor(seconds * state.detail.fps + 1e-6));
      let lo = 0;
      let hi = last;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (timeOf(mid) <= seconds + 1e-6) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    }

    function prefetchAhead(seconds) {
      prefetchUntil(Math.min(state.detail.length, frameAtTime(timeOf(state.frame) + seconds) + 1));
    }

    function togglePlay() {
      if (!state.detail) return;
      if (state.playing) {
        stopPlaying();
        return;
      }
      if (state.frame >= state.detail.length - 1) setFrame(0);
      state.playing = true;
      $("play").textContent = "\u275A\u275A";
      $("play").setAttribute("aria-label", "pause");
      let startWall = performance.now();
      let startTime = timeOf(state.frame);
      let startSpeed = speed();
      const tick = (now) => {
        if (!state.playing) return;
        if (speed() !== startSpeed) {  // a speed change restarts the clock at the shown frame
          startWall = now;
          startTime = timeOf(state.frame);
          startSpeed = speed();
        }
        const target = frameAtTime(startTime + ((now - startWall) / 1000) * startSpeed);
        const images = [...document.querySelectorAll("#cameras img")];
        if (target !== state.frame && images.every((img) => img.complete)) setFrame(target);
        if (state.frame >= state.detail.length - 1) {
          stopPlaying();
          return;
        }
        prefetchAhead(1.5 * startSpeed);
        playTimer = requestAnimationFrame(tick);
      };
      playTimer = requestAnimationFrame(tick);
    }

    function stepFrames(delta) {
      stopPlaying();
      setFrame(state.frame + delta);
    }

    // Space, the arrows (Shift: 10 frames), Home and End, for the page's key map
    function frameKeys(event) {
      return {
        " ": togglePlay,
        ArrowLeft: () => stepFrames(-(event.shiftKey ? 10 : 1)),
        ArrowRight: () => stepFrames(event.shiftKey ? 10 : 1),
        Home: () => setFrame(0),
        End: () => state.detail && setFrame(state.detail.length - 1),
      };
    }

    function bindPlayer() {
      $("frame-slider").addEventListener("input", (event) => {
        stopPlaying();
        setFrame(Number(event.target.value));
      });
      $("prev-frame").addEventListener("click", () => stepFrames(-1));
      $("next-frame").addEventListener("click", () => stepFrames(1));
      $("play").addEventListener("click", togglePlay);
      const speedSelect = $("speed");
      if (speedSelect) {
        const saved = localStorage.getItem("strands-labels.speed");
        if (saved && [...speedSelect.options].some((o) => o.value === saved)) speedSelect.value = saved;
        speedSelect.addEventListener("change", () => {
          localStorage.setItem("strands-labels.speed", speedSelect.value);
          speedSelect.blur();  // keys go back to the player (Space plays)
        });
      }
    }

    // head, task line, slider range and camera tiles of state.detail; `missingNote` ends the
    // text shown in place of a camera whose video is missing
    function renderPlayer(badges, missingNote = null) {
      const d = state.detail;
      $("no-episode").hidden = true;
      $("episode-view").hidden = false;
      $("ep-index").textContent = String(d.episode);
      $("ep-badges").replaceChildren(...badges);
      $("ep-task").textContent = `${d.tasks.join(" · ") || "no task"} — ${d.length} frames, ${(d.length / d.fps).toFixed(2)} s at ${d.fps} fps`;
      $("frame-slider").max = String(d.length - 1);
      const tiles = d.cameras.map((camera) => {
        const frame = h("div", { class: camera.available ? "frame" : "frame no-video" });
        if (camera.available) {
          frame.append(h("img", { alt: `${camera.label} frame`, dataset: { camera: camera.index }, decoding: "async" }));
        } else {
          const why = camera.problem.replace(/^video missing: /, "");
          const note = missingNote ? [h("br"), missingNote] : [];
          frame.append(h("div", { class: "missing" }, h("strong", {}, "Video missing"), why, note));
        }
        return h("figure", { class: "camera" }, frame, h("figcaption", {}, camera.label));
      });
      if (!tiles.length) tiles.push(h("p", { class: "empty" }, "This dataset has no camera."));
      $("cameras").replaceChildren(...tiles);
    }

    return { setFrame, stopPlaying, togglePlay, frameKeys, bindPlayer, renderPlayer };
  }

  // ---------------------------------------------------------------- channel groups
  // Which channel groups (by name prefix, per feature) a plot shows: the review page's plot and
  // the segment page's state lane share one choice per dataset (localStorage). Default: every
  // state group when they are few channels, else the first one (readable lines).
  const groupsKey = () => `strands-labels.groups.${config.dataset || ""}`;

  function chosenGroups(series, { stateOnly = false } = {}) {
    const groups = series.groups.filter((g) => !stateOnly || g.source === series.keys.state);
    let saved = null;
    try {
      saved = JSON.parse(localStorage.getItem(groupsKey()) || "null");
    } catch (error) {
      saved = null;
    }
    const known = new Set(groups.map((g) => g.label));
    const kept = Array.isArray(saved) ? saved.filter((label) => known.has(label)) : [];
    const stateGroups = groups.filter((g) => g.source === series.keys.state);
    const stateChannels = stateGroups.reduce((n, g) => n + g.channels.length, 0);
    const initial = stateChannels <= 8 ? stateGroups : stateGroups.slice(0, 1);
    return new Set(kept.length ? kept : initial.map((g) => g.label));
  }

  function saveGroups(on) {
    localStorage.setItem(groupsKey(), JSON.stringify([...on]));
  }

  // one chip per group; a click turns the group on or off, keeps the choice and redraws
  function groupChips(series, groups, on, redraw) {
    return groups.map((group) =>
      groupChip(series, group, on.has(group.label), () => {
        if (on.has(group.label)) on.delete(group.label);
        else on.add(group.label);
        saveGroups(on);
        redraw();
      }),
    );
  }

  function groupChip(series, group, on, toggle) {
    const chip = h(
      "button",
      {
        type: "button",
        class: `group${on ? " on" : ""}`,
        "aria-pressed": on ? "true" : "false",
        title: `${group.channels.length} channels: ${group.channels.map((c) => series.names[c]).join(", ")}`,
      },
      group.label,
      h("span", { class: "n" }, String(group.channels.length)),
    );
    chip.addEventListener("click", toggle);
    return chip;
  }

  // ---------------------------------------------------------------- plots loading
  // A figure.loading shows its .plot-status text until its image has arrived (or says it failed).
  function watchPlots() {
    for (const figure of document.querySelectorAll("figure.loading")) {
      const img = figure.querySelector("img");
      const status = figure.querySelector(".plot-status");
      if (!img) continue;
      const done = () => figure.classList.remove("loading");
      if (img.complete && img.naturalWidth > 0) done();
      img.addEventListener("load", done);
      img.addEventListener("error", () => {
        figure.classList.remove("loading");
        figure.classList.add("failed");
        if (status) status.textContent = "This plot could not be drawn; see the server's log.";
      });
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watchPlots);
  else watchPlots();

  return {
    config,
    token,
    $,
    h,
    api,
    post,
    setStatus,
    badge,
    episodeFromHash,
    onEpisodeHash,
    episodeItem,
    highlightEpisode,
    isTyping,
    bindKeys,
    fitCanvas,
    extent,
    niceStep,
    player,
    chosenGroups,
    groupChips,
  };
})();
