// The replay of a bot game page (src/site/replay.rs): steps through the
// lines the bots printed, shows each with its player and the picture's
// frame of its move, round or turn (the strip's `step-N`, or the nearest
// earlier one a thinned strip shows). Buttons, a slider, the keys ← → Home
// End and space, and the fragment `#move=K` (the K-th line). Reads its
// data from the JSON beside it; writes only text (never HTML) and leaves
// the static page as it is.
(function () {
  "use strict";
  // The panel stands above the picture: start once the page is read.
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
  function start() {
    var data = JSON.parse(document.getElementById("replay-data").textContent);
    var steps = data.steps;
    var panel = document.getElementById("replay");
    if (!steps.length) return;
    var $ = function (id) { return document.getElementById(id); };
    var slider = $("replay-slider"), pos = $("replay-pos"), who = $("replay-who");
    var line = $("replay-line"), frame = $("replay-frame"), play = $("replay-play");
    // The strip's frames by number.
    var frames = [];
    if (data.frames) {
      var svgs = document.querySelectorAll("svg[id^='step-']");
      for (var i = 0; i < svgs.length; i++) {
        var n = parseInt(svgs[i].id.slice(5), 10);
        if (!isNaN(n)) frames.push({ n: n, fig: svgs[i].closest("figure") || svgs[i] });
      }
      frames.sort(function (a, b) { return a.n - b.n; });
    }
    var at = 0, timer = null, marked = null;
    function frameFor(n) {
      var best = null;
      for (var i = 0; i < frames.length && frames[i].n <= n; i++) best = frames[i];
      return best;
    }
    function show(k, initial) {
      at = Math.max(0, Math.min(steps.length - 1, k));
      var s = steps[at], unit = data.unit;
      slider.value = String(at + 1);
      pos.textContent = "line " + (at + 1) + " of " + steps.length;
      who.textContent = (s[2] > 0 ? unit.charAt(0).toUpperCase() + unit.slice(1) + " " + s[2] + ": " : "") +
        (data.players[s[0]] || "player " + (s[0] + 1)) + " printed";
      line.textContent = s[1];
      line.setAttribute("data-step", String(at + 1));
      while (frame.firstChild) frame.removeChild(frame.firstChild);
      if (marked) { marked.style.outline = ""; marked = null; }
      var f = frameFor(s[2]);
      frame.setAttribute("data-frame", f ? String(f.n) : "");
      if (f) {
        var copy = f.fig.cloneNode(true);
        var all = [copy].concat(Array.prototype.slice.call(copy.querySelectorAll("[id]")));
        for (var j = 0; j < all.length; j++) {
          if (all[j].id) { all[j].setAttribute("data-id", all[j].id); all[j].removeAttribute("id"); }
        }
        var svg = copy.tagName.toLowerCase() === "svg" ? copy : copy.querySelector("svg");
        if (svg) {
          var w = parseFloat(svg.getAttribute("width")) || 130;
          var h = parseFloat(svg.getAttribute("height")) || 130;
          var scale = Math.min(3, 420 / w);
          svg.setAttribute("width", String(Math.round(w * scale)));
          svg.setAttribute("height", String(Math.round(h * scale)));
        }
        copy.style.maxWidth = "none";
        if (f.n !== s[2]) {
          var note = document.createElement("p");
          note.className = "replay-nearest";
          note.textContent = "The strip is thinned: this is the nearest earlier picture, after " +
            unit + " " + f.n + ".";
          frame.appendChild(note);
        }
        frame.appendChild(copy);
        f.fig.style.outline = "3px solid #555";
        marked = f.fig;
      }
      if (!initial) try {
        history.replaceState(null, "", "#move=" + (at + 1));
      } catch (e) { /* a file:// page may refuse it */ }
    }
    function stop() {
      if (timer) { clearInterval(timer); timer = null; }
      play.textContent = "play";
    }
    function toggle() {
      if (timer) { stop(); return; }
      if (at >= steps.length - 1) show(0);
      play.textContent = "pause";
      timer = setInterval(function () {
        if (at >= steps.length - 1) stop(); else show(at + 1);
      }, 400);
    }
    $("replay-first").onclick = function () { stop(); show(0); };
    $("replay-back").onclick = function () { stop(); show(at - 1); };
    $("replay-next").onclick = function () { stop(); show(at + 1); };
    $("replay-last").onclick = function () { stop(); show(steps.length - 1); };
    play.onclick = toggle;
    slider.oninput = function () { stop(); show(parseInt(slider.value, 10) - 1); };
    document.addEventListener("keydown", function (e) {
      if (e.target === slider || e.altKey || e.ctrlKey || e.metaKey) return;
      var k = e.key;
      if (k === "ArrowRight") { stop(); show(at + 1); }
      else if (k === "ArrowLeft") { stop(); show(at - 1); }
      else if (k === "Home") { stop(); show(0); }
      else if (k === "End") { stop(); show(steps.length - 1); }
      else if (k === " " && (e.target === document.body || e.target === document.documentElement || e.target === document)) { toggle(); }
      else return;
      e.preventDefault();
    });
    // A fragment typed or followed later moves the replay too.
    window.addEventListener("hashchange", function () {
      var h = /(?:^#|&)move=(\d+)/.exec(location.hash);
      if (h) { stop(); show(parseInt(h[1], 10) - 1, true); }
    });
    var m = /(?:^#|&)move=(\d+)/.exec(location.hash);
    panel.hidden = false;
    show(m ? parseInt(m[1], 10) - 1 : 0, true);
  }
})();
