/* raise-miner: offline search, no server needed (the table of all.html: table.js).
 *
 * A paste is read the way `miner lookup` reads it (miner/lookup.py): log prefixes
 * stripped (the same patterns, shipped in search-data.js), the final
 * `Type: message` line and the `File "...", line N` frames of a traceback. The
 * message is matched against every template (literal parts exact, placeholders
 * any text), frames and pasted paths pin sites, and MiniSearch (full text with
 * prefix and fuzzy terms) ranks the rest below the matches. Results are built
 * with textContent only: messages come from source code and are never HTML.
 * Each result links to its card: `errors/<id>.html` for an error users can
 * cause, `<audience>/<module>.html#<id>` for the others (search-data.js).
 */
(function () {
  "use strict";
  var DATA = window.RAISE_MINER_SEARCH;
  if (!DATA) return;
  var GOOD = 0.5, MIN_LITERAL = 6, MIN_COVERAGE = 0.25, MIN_FRAGMENT = 12, MAX_MESSAGE = 4000;
  var HEAD = "Traceback (most recent call last):";
  var CAUSE = "The above exception was the direct cause of the following exception:";
  var CONTEXT = "During handling of the above exception, another exception occurred:";
  var FRAME = /^\s*File "([^"\n]+)", line (\d+)(?:, in (.+))?\s*$/;
  var EXC_LINE = /^([A-Za-z_][\w.]*)(?::(?: (.*))?)?$/;
  var CARETS = /^\s*[~^]+\s*$/;
  var LOGGER = /^[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+$/;
  var COLLECTOR_MARK = /[-_|\[\]:\/0-9]/;
  var MAX_HEADS = 3;
  var PREFIXES = DATA.prefixes.map(function (p) { return new RegExp(p); });
  var docs = DATA.docs, paths = DATA.paths, pages = DATA.pages || [];
  /* The page of a result: its card, or its entry on a grouped page. */
  function cardOf(doc) { return doc[7] < 0 ? "errors/" + doc[0] + ".html" : pages[doc[7]] + "#" + doc[0]; }
  window.raiseMinerCard = function (index) { return cardOf(docs[index]); };

  function stripPrefixes(line) {
    for (var round = 0; round < 8; round++) {
      var changed = false;
      for (var i = 0; i < PREFIXES.length; i++) {
        var next = line.replace(PREFIXES[i], "");
        if (next !== line) { line = next; changed = true; break; }
      }
      if (!changed) break;
    }
    return line;
  }
  /* The prefix every line carries, put there by a log collector (miner/lookup.py's
     strip_common_prefix): only when its first word holds a digit, -, _, |, [, : or /. */
  function stripCommonPrefix(lines) {
    var shown = lines.filter(function (l) { return l.trim(); });
    if (shown.length < 2) return lines;
    var prefix = shown[0];
    shown.forEach(function (l) {
      var n = 0;
      while (n < prefix.length && n < l.length && prefix.charAt(n) === l.charAt(n)) n++;
      prefix = prefix.slice(0, n);
    });
    var cut = Math.max(prefix.lastIndexOf(" "), prefix.lastIndexOf("\t"));
    if (cut < 0) return lines;
    prefix = prefix.slice(0, cut + 1);
    var words = prefix.trim().split(/\s+/);
    if (!prefix.trim() || prefix.trim().length < 3 || !COLLECTOR_MARK.test(words[0]) ||
        prefix.indexOf(HEAD) >= 0 || FRAME.test(prefix)) return lines;
    return lines.map(function (l) { return l.indexOf(prefix) === 0 ? l.slice(prefix.length) : l; });
  }
  function isException(name) {
    var last = name.split(".").pop();
    return /^[A-Z]/.test(last) && !LOGGER.test(name);
  }
  /* Where a line's message may start: `Type: message`, then after each of the first ": ". */
  function heads(line) {
    var out = [], seen = {}, start = 0;
    for (var round = 0; round <= MAX_HEADS; round++) {
      var rest = line.slice(start), head = EXC_LINE.exec(rest);
      if (head && head[2] !== undefined && !seen[head[2]]) {
        out.push([isException(head[1]) ? head[1] : null, head[2]]); seen[head[2]] = true;
      } else if (start && rest.trim() && !seen[rest]) {
        out.push([null, rest]); seen[rest] = true;
      }
      var found = line.indexOf(": ", start);
      if (found < 0) break;
      start = found + 2;
    }
    return out;
  }
  function normalize(text) { return text.replace(/\s+/g, " ").trim(); }
  function solid(text) { return text.replace(/\s+/g, "").length; }

  function readings(lines) {
    lines = lines.slice();
    while (lines.length && !lines[lines.length - 1].trim()) lines.pop();
    var out = [];
    for (var end = Math.min(lines.length, 40); end > 0; end--) {
      var text = lines.slice(0, end).join("\n").trim();
      if (text && out.indexOf(text) < 0) out.push(text);
    }
    out.slice().forEach(function (text) {
      var q = text.charAt(0);
      if (text.length >= 2 && (q === "'" || q === '"') && text.charAt(text.length - 1) === q) {
        var inner = text.slice(1, -1);
        if (out.indexOf(inner) < 0) out.push(inner);
      }
    });
    return out;
  }

  function parseBlock(lines, role) {
    var frames = [], last = -1;
    lines.forEach(function (line, i) {
      var m = FRAME.exec(line);
      if (m) { frames.push({ path: m[1], line: +m[2] }); last = i; }
    });
    var start = last + 1;
    while (start < lines.length && (!lines[start].trim() || /^[ \t]/.test(lines[start]) || CARETS.test(lines[start]))) start++;
    if (last >= 0 && start + 1 < lines.length && !EXC_LINE.test(lines[start]) && EXC_LINE.test(lines[start + 1])) start++;
    if (start >= lines.length) return { exception: null, messages: [], frames: frames, role: role };
    var head = EXC_LINE.exec(lines[start]);
    if (!head) return { exception: null, messages: readings(lines.slice(start)), frames: frames, role: role };
    var type = head[2] !== undefined && !isException(head[1]) ? null : head[1];
    return { exception: type, messages: readings([head[2] || ""].concat(lines.slice(start + 1))), frames: frames, role: role };
  }

  function parsePlain(lines) {
    var frames = [], body = [];
    lines.forEach(function (line) {
      var m = FRAME.exec(line);
      if (m) frames.push({ path: m[1], line: +m[2] }); else body.push(line);
    });
    var groups = [body];
    if (body.length > 1) body.slice(0, 30).forEach(function (line) { groups.push([line]); });
    var out = [];
    groups.forEach(function (group) {
      if (!group.length) return;
      var whole = readings([group.join("\n")]);
      if (whole.length) out.push({ exception: null, messages: whole, frames: frames, role: "message" });
      heads(group[0]).forEach(function (h) {
        var split = readings([h[1]].concat(group.slice(1)));
        if (split.length) out.push({ exception: h[0], messages: split, frames: frames, role: "message" });
      });
    });
    if (!out.length && frames.length) out.push({ exception: null, messages: [], frames: frames, role: "message" });
    return out;
  }

  function parsePaste(text) {
    var lines = stripCommonPrefix(stripCommonPrefix(text.split(/\r\n|\r|\n/)).map(stripPrefixes));
    if (!lines.some(function (l) { return l.indexOf(HEAD) >= 0; })) return parsePlain(lines);
    var blocks = [], links = [], current = null, pending = "context";
    lines.forEach(function (line) {
      var t = line.trim();
      if (line.indexOf(HEAD) >= 0) { current = []; blocks.push(current); links.push(pending); pending = "context"; }
      else if (t === CAUSE) { pending = "cause"; current = null; }
      else if (t === CONTEXT) { pending = "context"; current = null; }
      else if (current) current.push(line);
    });
    var roles = links.slice(1).concat(["final"]);
    return blocks.map(function (b, i) { return parseBlock(b, roles[i]); }).reverse();
  }

  /* Per-document matchers, made on first use. */
  var prepared = null, suffixes = null, basenames = null;
  function prepare() {
    if (prepared) return;
    prepared = docs.map(function (doc) {
      var parts = doc[5];
      if (!parts) return null;
      var literal = normalize(parts.filter(function (p) { return p !== 0; }).join(" "));
      var chunks = literal ? literal.split(" ") : [];
      var anchor = chunks.reduce(function (a, b) { return b.length > a.length ? b : a; }, "");
      return { parts: parts, literal: literal, size: solid(literal), anchor: anchor, template: null };
    });
    suffixes = new Map(); basenames = new Map();
    paths.forEach(function (path, index) {
      var comps = path.split("/");
      for (var n = Math.min(2, comps.length); n <= comps.length; n++) {
        var key = comps.slice(-n).join("/");
        if (!suffixes.has(key)) suffixes.set(key, index);
      }
      var base = comps[comps.length - 1];
      if (!basenames.has(base)) basenames.set(base, []);
      basenames.get(base).push(index);
    });
  }
  /* The template matcher of miner/lookup.py (compile_template, Solid,
   * Template.match_solid): no RegExp built from a template, no backtracking.
   * White space is removed from the message and from the literal text,
   * keeping where it was (bit k of `breaks`: white space before text[k]).
   * A block (literal text between placeholders) matches where its text is
   * and the message has no white space inside one of its chunks (a white
   * space run of the template matches any run, or none). The first block is
   * pinned to the start unless a placeholder comes first, the last to the end
   * unless one comes last, and every other block is taken at its leftmost
   * match after the previous one (exact: placeholders match any text).
   * Each position is a candidate start of at most one block: O(n + k)
   * indexOf calls and mask tests for n characters and k blocks. */
  var NONE = 0, BLANK = 1, ANY = 2, ZERO = BigInt(0), ONE = BigInt(1);
  function solidOf(message) {
    var words = message.split(/\s+/).filter(Boolean), text = words.join("");
    if (words.length < 2) return { text: text, breaks: ZERO };
    var bits = new Array(text.length).fill("0"), start = 0;  // bit k is digit length - 1 - k
    for (var i = 0; i < words.length - 1; i++) { start += words[i].length; bits[text.length - 1 - start] = "1"; }
    return { text: text, breaks: BigInt("0b" + bits.join("")) };
  }
  function makeBlock(chunks) {
    var text = chunks.join(""), inner = (ONE << BigInt(text.length)) - BigInt(2), start = 0;
    for (var i = 0; i < chunks.length - 1; i++) { start += chunks[i].length; inner &= ~(ONE << BigInt(start)); }
    return { text: text, inner: inner };
  }
  function compileTemplate(parts) {
    var blocks = [], chunks = [], gap = NONE, openStart = false;
    parts.forEach(function (p) {
      if (p === 0) { gap = ANY; return; }
      if (!p) return;
      p.split(/\s+/).forEach(function (chunk, number) {
        if (number) gap = Math.max(gap, BLANK);
        if (!chunk) return;
        if (!chunks.length) { openStart = gap === ANY; chunks.push(chunk); }
        else if (gap === ANY) { blocks.push(makeBlock(chunks)); chunks = [chunk]; }
        else if (gap === BLANK) chunks.push(chunk);
        else chunks[chunks.length - 1] += chunk;
        gap = NONE;
      });
    });
    if (chunks.length) blocks.push(makeBlock(chunks)); else openStart = gap === ANY;
    return { blocks: blocks, openStart: openStart, openEnd: gap === ANY };
  }
  function blockAt(block, read, start) { return ((read.breaks >> BigInt(start)) & block.inner) === ZERO; }
  function findIn(text, needle, from, to) {
    var at = text.indexOf(needle, from);
    return at >= 0 && at + needle.length <= to ? at : -1;
  }
  function matchSolid(template, read) {
    var text = read.text, blocks = template.blocks;
    if (!blocks.length) return template.openEnd || !text;
    var lo = 0, hi = text.length, first = 0, last = blocks.length, block, start;
    if (!template.openStart) {
      block = blocks[0];
      if (!text.startsWith(block.text) || !blockAt(block, read, 0)) return false;
      if (last === 1 && !template.openEnd) return block.text.length === hi;
      lo = block.text.length; first = 1;
    }
    if (!template.openEnd) {
      block = blocks[last - 1];
      start = hi - block.text.length;
      if (start < lo || !text.endsWith(block.text) || !blockAt(block, read, start)) return false;
      hi = start; last--;
    }
    for (var i = first; i < last; i++) {
      block = blocks[i];
      start = findIn(text, block.text, lo, hi);
      while (start >= 0 && !blockAt(block, read, start)) start = findIn(text, block.text, start + 1, hi);
      if (start < 0) return false;
      lo = start + block.text.length;
    }
    return true;
  }
  function templateOf(entry) {
    if (!entry.template) entry.template = compileTemplate(entry.parts);
    return entry.template;
  }
  function repoPath(path) {
    var comps = path.replace(/\\/g, "/").split("/").filter(Boolean);
    for (var n = comps.length; n >= 2; n--) {
      var hit = suffixes.get(comps.slice(-n).join("/"));
      if (hit !== undefined) return hit;
    }
    return null;
  }
  function lastName(dotted) {
    if (!dotted) return null;
    var name = dotted.split(".").pop();
    return /^[A-Za-z_]\w*$/.test(name) ? name : null;
  }

  function add(best, index, score, reason, site) {
    var cur = best.get(index);
    if (!cur || score > cur.score) best.set(index, { index: index, score: score, reasons: [reason], site: site });
  }

  function matchRaised(raised, weight, best) {
    var pinned = new Map(), sameFile = new Set();
    raised.frames.slice().reverse().forEach(function (frame) {
      var p = repoPath(frame.path);
      if (p === null) return;
      docs.forEach(function (doc, i) {
        doc[6].forEach(function (s) {
          if (s[0] !== p) return;
          sameFile.add(i);
          if (s[1] <= frame.line && frame.line <= s[2] && !pinned.has(i)) pinned.set(i, s);
        });
      });
    });
    var message = new Map();
    raised.messages.forEach(function (text) {
      text = text.slice(0, MAX_MESSAGE);
      var read = solidOf(text), size = read.text.length;
      if (!size) return;
      prepared.forEach(function (entry, i) {
        if (!entry || entry.size < MIN_LITERAL || entry.size > size || text.indexOf(entry.anchor) < 0) return;
        var coverage = Math.min(entry.size / size, 1);
        if (coverage < MIN_COVERAGE || !matchSolid(templateOf(entry), read)) return;
        if (!message.has(i) || message.get(i) < coverage) message.set(i, coverage);
      });
    });
    var shown = lastName(raised.exception);
    var candidates = new Set(Array.from(pinned.keys()).concat(Array.from(message.keys())));
    candidates.forEach(function (i) {
      var score, reason, site = pinned.get(i) || docs[i][6][0];
      if (pinned.has(i)) {
        score = message.has(i) ? 0.95 + 0.05 * message.get(i) : 0.9;
        reason = "a traceback frame points at " + paths[site[0]] + ":" + site[1];
      } else {
        score = 0.55 + 0.35 * message.get(i) + (sameFile.has(i) ? 0.05 : 0);
        reason = "message matches the template (" + Math.round(100 * message.get(i)) + "% literal)";
        var own = lastName(docs[i][1]);
        if (shown && own) score = shown === own ? score + 0.02 : score * 0.85;
      }
      add(best, i, Math.min(score, 1) * weight, reason, site);
    });
    return message.size + pinned.size;
  }

  function matchFragment(text, best) {
    var needle = normalize(text);
    if (solid(needle) < MIN_FRAGMENT) return;
    prepared.forEach(function (entry, i) {
      if (!entry || entry.literal.indexOf(needle) < 0) return;
      var inPart = entry.parts.some(function (p) { return p !== 0 && normalize(p).indexOf(needle) >= 0; });
      if (inPart) add(best, i, 0.5 + 0.3 * Math.min(solid(needle) / Math.max(entry.size, 1), 1), "the text is part of the message", docs[i][6][0]);
    });
  }

  /* A pasted path: `sglang/srt/x.py`, `x.py:154`, `.../x.py", line 154`. */
  function matchPath(text, best) {
    var m = /^\s*"?([^\s":,]+\.py|[^\s":,]*\/[^\s":,]*)"?(?:(?::|,? line )(\d+))?\s*$/.exec(text);
    if (!m) return;
    var query = m[1].replace(/\\/g, "/"), line = m[2] ? +m[2] : null;
    var files = [];
    var exact = repoPath(query);
    if (exact !== null) files = [exact];
    else if (basenames.has(query)) files = basenames.get(query);
    else paths.forEach(function (p, i) { if (p.indexOf(query) >= 0) files.push(i); });
    var wanted = new Set(files);
    docs.forEach(function (doc, i) {
      doc[6].forEach(function (s) {
        if (!wanted.has(s[0])) return;
        if (line !== null && s[1] <= line && line <= s[2]) add(best, i, 0.9, "the path and line point at this site", s);
        else add(best, i, files.length === 1 ? 0.6 : 0.5, "raised in " + paths[s[0]], s);
      });
    });
  }

  var mini = null;
  function fullText() {
    if (!mini) {
      mini = new MiniSearch({
        fields: ["message", "exception", "module", "path", "scope"],
        searchOptions: { prefix: true, fuzzy: 0.2, boost: { message: 3, exception: 2, path: 1.5 } }
      });
      mini.addAll(docs.map(function (doc, i) {
        return {
          id: i,
          message: doc[5] ? doc[5].filter(function (p) { return p !== 0; }).join(" ") : doc[2],
          exception: doc[1], module: doc[3], scope: doc[4],
          path: doc[6].map(function (s) { return paths[s[0]]; }).join(" ")
        };
      }));
    }
    return mini;
  }

  /* Ranked results: [{index, score, reasons, site}], best first. */
  function search(text) {
    prepare();
    var best = new Map(), strong = 0;
    var raised = parsePaste(text);
    raised.forEach(function (r) {
      strong += matchRaised(r, r.role === "final" || r.role === "message" ? 1 : 0.97, best);
    });
    if (!strong) {
      var first = raised.length && raised[0].messages.length ? raised[0].messages[0] : text;
      matchFragment(first, best);
      matchPath(text.trim(), best);
    }
    var ranked = Array.from(best.values());
    if (!ranked.some(function (r) { return r.score >= GOOD; }) && typeof MiniSearch !== "undefined") {
      var query = raised.length && raised[0].messages.length ? raised[0].messages[0] : text;
      var hits = fullText().search(query.slice(0, 500)).slice(0, 20);
      var top = hits.length ? hits[0].score : 1;
      hits.forEach(function (h) {
        if (!best.has(h.id)) best.set(h.id, { index: h.id, score: 0.45 * h.score / top, reasons: ["shares words with the text"], site: docs[h.id][6][0] });
      });
      ranked = Array.from(best.values());
    }
    ranked.sort(function (a, b) { return b.score - a.score || (docs[a.index][0] < docs[b.index][0] ? -1 : 1); });
    return ranked;
  }
  window.raiseMinerSearch = search;
  /* The matcher alone, for tests: parts as in search-data.js (0 a placeholder). */
  search.matchesTemplate = function (parts, message) {
    return matchSolid(compileTemplate(parts), solidOf(message));
  };
  /* The paste parser alone, for tests. */
  search.parsePaste = parsePaste;

  /* ---- The page: search box and results. ---- */
  var box = document.getElementById("q");
  var results = document.getElementById("results");
  var status = document.getElementById("search-status");
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function show(text) {
    results.textContent = "";
    if (!text.trim()) { status.textContent = ""; results.setAttribute("data-query", text); return []; }
    var ranked = search(text).slice(0, 20);
    var good = ranked.filter(function (r) { return r.score >= GOOD; }).length;
    status.textContent = good
      ? good + (good === 1 ? " card matches." : " cards match.")
      : ranked.length ? "No card matches this well; the closest candidates:" : "No card found.";
    ranked.forEach(function (r) {
      var doc = docs[r.index];
      var li = el("li", r.score >= GOOD ? "good" : "candidate");
      li.appendChild(el("span", "score", r.score.toFixed(2)));
      li.appendChild(el("span", "exc", doc[1] || "re-raise"));
      var a = el("a", "title", doc[2]);
      a.href = cardOf(doc);
      li.appendChild(a);
      if (doc[8]) li.appendChild(el("span", "audience", doc[8]));
      if (doc[9]) li.appendChild(el("span", "release", doc[9]));
      li.appendChild(el("span", "where", paths[r.site[0]] + ":" + r.site[1] + " in " + doc[4]));
      li.appendChild(el("span", "why", r.reasons.join("; ")));
      results.appendChild(li);
    });
    results.setAttribute("data-query", text);
    return ranked;
  }
  if (box) {
    var timer = null;
    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { show(box.value); }, 120);
    });
    box.addEventListener("keydown", function (event) {
      if (event.key !== "Enter" || event.shiftKey) return;
      event.preventDefault();
      clearTimeout(timer);
      var ranked = show(box.value);
      if (ranked.length && ranked[0].score >= GOOD) location.href = cardOf(docs[ranked[0].index]);
    });
    var initial = new URLSearchParams(location.search).get("q") ||
      (location.hash.indexOf("#q=") === 0 ? decodeURIComponent(location.hash.slice(3)) : "");
    if (initial) { box.value = initial; show(initial); }
  }
})();
