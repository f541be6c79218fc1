/* raise-miner: offline search, no server needed (the table of all.html: table.js).
 *
 * The matcher is a function-for-function port of `miner lookup`'s (the
 * package miner/lookup/: prefixes, jsonvalues, traceback and scan read the
 * paste; candidates, template, frames and index score it), and every number
 * and line pattern it uses comes from the same Python definitions
 * (miner/publish/patterns.py: PREFIX_PATTERNS, RULES, LINE_PATTERNS), shipped
 * in search-data.js: one set of rules, and one test table runs both readers
 * on the same pastes (tests/test_search_parity.py). A paste is read as the
 * CLI reads it: collectors' shared line prefixes and log prefixes stripped
 * (each pattern reads a line's first MAX_PREFIX characters), traceback
 * blocks complete or cut at either end, indented continuation lines joined
 * to the line above, messages after ": " in a line, logger names that are
 * no exception types, string values of JSON objects read as pastes,
 * `path.py:123` alone; the message is matched against every template whose
 * anchor it holds (literal parts exact, placeholders any text, end
 * punctuation aside), frames pin sites by line, file, function and source
 * line (in a file that moved, by function and source line), and MiniSearch
 * (full text with prefix and fuzzy terms) ranks the rest below the matches
 * when nothing matches. Results are built with textContent only: messages
 * come from source code and are never HTML. Each result links to its card:
 * `errors/<id>.html` for an error users can cause,
 * `<audience>/<module>.html#<id>` for the others (search-data.js).
 */
(function () {
  "use strict";
  var DATA = (typeof window !== "undefined" ? window : globalThis).RAISE_MINER_SEARCH;
  if (!DATA) return;
  var R = DATA.rules, P = DATA.patterns;
  var GOOD = R.GOOD, MIN_LITERAL = R.MIN_LITERAL, MIN_COVERAGE = R.MIN_COVERAGE,
    MIN_SPECIFIC = R.MIN_SPECIFIC, WEAK_COVERAGE = R.WEAK_COVERAGE, MIN_FRAGMENT = R.MIN_FRAGMENT,
    MAX_MESSAGE = R.MAX_MESSAGE, MAX_HEADS = R.MAX_HEADS, SIMILAR_CODE = R.SIMILAR_CODE,
    MAX_CODE = R.MAX_CODE, END_PUNCTUATION = R.END_PUNCTUATION, MAX_PREFIX = R.MAX_PREFIX,
    MAX_READING_LINES = R.MAX_READING_LINES, MAX_JSON_VALUES = R.MAX_JSON_VALUES,
    MAX_JSON_DEPTH = R.MAX_JSON_DEPTH;
  /* Length of the anchor piece the anchor index files a template under (candidates.py: GRAM). */
  var GRAM = 4;
  /* The closest errors by word overlap taken as candidates (candidates.py: MAX_WORD_CANDIDATES). */
  var MAX_WORD_CANDIDATES = 64;
  var HEAD = "Traceback (most recent call last):";
  var CAUSE = "The above exception was the direct cause of the following exception:";
  var CONTEXT = "During handling of the above exception, another exception occurred:";
  var FRAME = new RegExp(P.FRAME), EXC_LINE = new RegExp(P.EXCEPTION_LINE);
  var CARETS = new RegExp(P.CARETS), LOGGER = new RegExp(P.LOGGER_NAME);
  var COLLECTOR_MARK = new RegExp(P.COLLECTOR_MARK), PATH_LINE = new RegExp(P.PATH_LINE);
  var CODE_HEAD = new RegExp(P.CODE_HEAD), WORD = new RegExp(P.WORD, "g");
  var EXC_NAME = new RegExp(P.EXCEPTION_NAME), JSON_TOKEN = new RegExp(P.JSON_TOKEN, "g");
  var PY_ESCAPE = new RegExp(P.PY_ESCAPE, "g");
  var PREFIXES = DATA.prefixes.map(function (p) { return new RegExp(p); });
  var docs = DATA.docs, paths = DATA.paths, pages = DATA.pages || [];
  /* The page of a result: its card, or its entry on a grouped page. */
  function cardOf(doc) { return doc[7] < 0 ? "errors/" + doc[0] + ".html" : pages[doc[7]] + "#" + doc[0]; }
  var root = typeof window !== "undefined" ? window : globalThis;
  root.raiseMinerCard = function (index) { return cardOf(docs[index]); };

  /* ---- Paste scanning (miner/lookup/prefixes.py, jsonvalues.py, traceback.py, scan.py). ---- */
  function isBlank(text) { return !text.trim(); }
  function normalize(text) { return text.replace(/\s+/g, " ").trim(); }
  function solid(text) { return text.replace(/\s+/g, "").length; }
  function rstripChars(text, chars) {
    var end = text.length;
    while (end > 0 && chars.indexOf(text.charAt(end - 1)) >= 0) end--;
    return text.slice(0, end);
  }
  function rstrip(text) { return text.replace(/\s+$/, ""); }
  /* strip_prefixes: each pattern reads the first MAX_PREFIX characters only. */
  function stripPrefixes(line) {
    for (var round = 0; round < 8; round++) {
      var head = line.slice(0, MAX_PREFIX), tail = line.slice(MAX_PREFIX), changed = false;
      for (var i = 0; i < PREFIXES.length; i++) {
        var next = head.replace(PREFIXES[i], "");
        if (next !== head) { line = next + tail; changed = true; break; }
      }
      if (!changed) break;
    }
    return line;
  }
  /* strip_common_prefix: the prefix every line carries, put there by a log
     collector: only when its first word holds a digit, -, _, |, [, : or /. */
  function stripCommonPrefix(lines) {
    var shown = lines.filter(function (l) { return !isBlank(l); });
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
  function indent(line) { var n = 0; while (n < line.length && (line.charAt(n) === " " || line.charAt(n) === "\t")) n++; return n; }
  function indented(line) { return line.charAt(0) === " " || line.charAt(0) === "\t"; }
  /* dedent: the indentation every non-blank line shares goes. */
  function dedent(lines) {
    var common = -1;
    lines.forEach(function (l) { if (!isBlank(l)) common = common < 0 ? indent(l) : Math.min(common, indent(l)); });
    if (common <= 0) return lines;
    return lines.map(function (l) { return isBlank(l) ? "" : l.slice(common); });
  }
  /* read_lines: prefixes stripped, each line cut at MAX_MESSAGE, shared indentation removed. */
  function readLines(text) {
    var lines = stripCommonPrefix(stripCommonPrefix(text.split(/\r\n|\r|\n/)).map(stripPrefixes));
    return dedent(lines.map(function (l) { return l.slice(0, MAX_MESSAGE); }));
  }
  /* python_string: a Python string literal as repr() writes it. */
  var NAMED = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"' };
  function pythonString(token) {
    return token.slice(1, -1).replace(PY_ESCAPE, function (all, code) {
      if (code.length > 1) {
        var value = parseInt(code.slice(1), 16);
        return value <= 0x10FFFF ? String.fromCodePoint(value) : all;
      }
      return Object.prototype.hasOwnProperty.call(NAMED, code) ? NAMED[code] : all;
    });
  }
  /* _string: the text of a complete string token, or null. */
  function stringOf(token) {
    var body = token.slice(1, -1), trailing = body.length - body.replace(/\\+$/, "").length;
    if (token.length < 2 || token.charAt(token.length - 1) !== token.charAt(0) || trailing % 2) return null;
    if (token.charAt(0) === '"') {
      var value;
      try { value = JSON.parse(token); } catch (e) { return pythonString(token); }
      return typeof value === "string" ? value : null;
    }
    return pythonString(token);
  }
  /* json_strings: decoded string values (not keys) inside braces, in one pass. */
  function jsonStrings(text, limit) {
    var out = [], depth = 0, position = 0;
    while (out.length < limit) {
      if (depth === 0) { position = text.indexOf("{", position); if (position < 0) break; }
      JSON_TOKEN.lastIndex = position;
      var token = JSON_TOKEN.exec(text);
      if (!token) break;
      position = JSON_TOKEN.lastIndex;
      var found = token[0];
      if (found === "{") depth++;
      else if (found === "}") depth = Math.max(depth - 1, 0);
      else if (text.slice(position, position + 64).replace(/^\s+/, "").charAt(0) !== ":") {
        var value = stringOf(found);
        if (value !== null) out.push(value);
      }
    }
    return out;
  }
  function isHead(line) { return rstrip(line).endsWith(HEAD); }
  function isException(name) {
    var last = name.split(".").pop();
    return /^[A-Z]/.test(last) && !LOGGER.test(name);
  }
  /* looks_raised: `Name: message` or `Name`, Name an exception class by its name. */
  function looksRaised(line) {
    var head = EXC_LINE.exec(line.trim());
    return !!head && isException(head[1]) && EXC_NAME.test(head[1].split(".").pop());
  }
  /* is_code: whether the line after a frame is its source line. */
  function isCode(lines, index) {
    var line = lines[index];
    if (isBlank(line) || FRAME.test(line) || CARETS.test(line) || isHead(line)) return false;
    if (indented(line)) return !looksRaised(line);
    var after = index + 1 < lines.length ? lines[index + 1] : "";
    return !EXC_LINE.test(line) && (EXC_LINE.test(after) || FRAME.test(after));
  }
  /* _frame_at: the frame, its source line, and the index after what it takes. */
  function frameAt(lines, index) {
    var m = FRAME.exec(lines[index]), code = null, after = index + 1;
    if (after < lines.length && isCode(lines, after)) {
      code = lines[after].trim(); after++;
      var own = indent(lines[index]);
      while (after < lines.length && !isBlank(lines[after]) && indent(lines[after]) > own &&
             !FRAME.test(lines[after]) && !looksRaised(lines[after])) after++;
    }
    while (after < lines.length && CARETS.test(lines[after])) after++;
    return [{ path: m[1], line: +m[2], func: m[3] === undefined ? null : m[3], code: code }, after];
  }
  function isSeparator(line) { var t = line.trim(); return t === CAUSE || t === CONTEXT; }
  /* _read_block: frames, then the exception line (null: cut before it). */
  function readBlock(lines, start) {
    var frames = [], index = isHead(lines[start]) ? start + 1 : start;
    while (index < lines.length) {
      var line = lines[index];
      if (FRAME.test(line)) { var got = frameAt(lines, index); frames.push(got[0]); index = got[1]; }
      else if (isBlank(line)) { if (frames.length) break; index++; }
      else if (CARETS.test(line)) index++;
      else if (isHead(line) || isSeparator(line)) break;
      else return { frames: frames, exceptionLine: index, end: index + 1 };
    }
    return { frames: frames, exceptionLine: null, end: index };
  }
  /* read_blocks: every block with its role in the chain, and which lines they take. */
  function readBlocks(lines) {
    var blocks = [], links = [], taken = lines.map(function () { return false; });
    var pending = "context", index = 0;
    while (index < lines.length) {
      var line = lines[index];
      if (isSeparator(line)) {
        pending = line.trim() === CAUSE ? "cause" : "context"; taken[index] = true; index++;
      } else if (isHead(line) || FRAME.test(line)) {
        var block = readBlock(lines, index);
        for (var n = index; n < block.end; n++) taken[n] = true;
        blocks.push(block); links.push(pending); pending = "context";
        index = Math.max(block.end, index + 1);
      } else index++;
    }
    var roles = blocks.length ? links.slice(1).concat(["final"]) : [];
    blocks.forEach(function (b, i) { b.role = roles[i]; });
    return { blocks: blocks, taken: taken };
  }
  /* message_readings: the message from its first line, then with each following line. */
  function readings(lines) {
    lines = lines.slice(0, MAX_READING_LINES + 1);
    while (lines.length && isBlank(lines[lines.length - 1])) lines.pop();
    var out = [];
    for (var end = lines.length; end > 0; end--) {
      var text = lines.slice(0, end).join("\n").trim();
      if (text && out.indexOf(text) < 0) out.push(text);
    }
    out.slice().forEach(function (text) {
      var value = unquote(text);
      if (value !== null && out.indexOf(value) < 0) out.push(value);
    });
    return out;
  }
  /* unquote: the value of a text that is one quoted string, as repr writes one. */
  function unquote(text) {
    JSON_TOKEN.lastIndex = 0;
    var token = JSON_TOKEN.exec(text);
    if (!token || token.index !== 0 || token[0].length !== text.length) return null;
    if (text.charAt(0) !== "'" && text.charAt(0) !== '"') return null;
    return stringOf(text);
  }
  /* heads: where a line's message may start: `Type: message`, then after each of the first ": ". */
  function heads(line) {
    var out = [], seen = new Set(), start = 0;
    for (var round = 0; round <= MAX_HEADS; round++) {
      var rest = line.slice(start), head = EXC_LINE.exec(rest);
      if (head && head[2] !== undefined && !seen.has(head[2])) {
        out.push([isException(head[1]) ? head[1] : null, head[2]]); seen.add(head[2]);
      } else if (start && rest.trim() && !seen.has(rest)) {
        out.push([null, rest]); seen.add(rest);
      }
      var found = line.indexOf(": ", start);
      if (found < 0) break;
      start = found + 2;
    }
    return out;
  }
  function opens(line) { return isHead(line) || FRAME.test(line) || isSeparator(line); }
  /* exception_of: a block's exception, its message read on up to the next block. */
  function exceptionOf(lines, block) {
    if (block.exceptionLine === null) return { exception: null, messages: [], frames: block.frames, role: block.role, alone: false };
    var tail = [], after = block.exceptionLine + 1;
    while (after < lines.length && tail.length < MAX_READING_LINES && !opens(lines[after])) tail.push(lines[after++]);
    var text = lines[block.exceptionLine].trim(), head = EXC_LINE.exec(text);
    if (!head) return { exception: null, messages: readings([text].concat(tail)), frames: block.frames, role: block.role, alone: false };
    var first = head[2] || "", exception = head[1];
    if (head[2] !== undefined && !isException(head[1])) { exception = null; first = head[2]; }
    return { exception: exception, messages: readings([first].concat(tail)), frames: block.frames, role: block.role, alone: false };
  }
  /* records: a plain line and the indented lines right under it. */
  function records(lines, taken) {
    var out = [], open = false;
    lines.forEach(function (line, n) {
      if (taken[n] || isBlank(line)) { open = false; return; }
      if (open && indented(line)) out[out.length - 1].push(n); else out.push([n]);
      open = true;
    });
    return out;
  }
  /* runs: the runs of plain lines between blocks, blank lines at either end left out. */
  function runs(lines, taken) {
    var out = [[]];
    lines.forEach(function (line, n) { if (taken[n]) out.push([]); else out[out.length - 1].push(line); });
    var trimmed = [];
    out.forEach(function (run) {
      var shown = [];
      run.forEach(function (l, n) { if (!isBlank(l)) shown.push(n); });
      if (shown.length) trimmed.push(run.slice(shown[0], shown[shown.length - 1] + 1));
    });
    return trimmed;
  }
  /* plain_messages: runs read whole and from their start, then each record. */
  function plainMessages(lines, taken, alone) {
    var out = [], seen = new Set();
    function add(exception, texts) {
      var fresh = readings(texts).filter(function (t) { return !seen.has(exception + "\u0000" + t); });
      fresh.forEach(function (t) { seen.add(exception + "\u0000" + t); });
      if (fresh.length) out.push({ exception: exception, messages: fresh, frames: [], role: "message", alone: alone });
    }
    function read(group) {
      var first = group[0].trim();
      add(null, [first].concat(group.slice(1)));
      heads(first).forEach(function (h) { add(h[0], [h[1]].concat(group.slice(1))); });
    }
    var groups = records(lines, taken);
    runs(lines, taken).forEach(function (run) {
      if (run.filter(function (l) { return !isBlank(l) && !indented(l); }).length > 1) {
        add(null, [run.join("\n")]);
        read(run);
      }
    });
    groups.forEach(function (group) { read(group.map(function (n) { return lines[n]; })); });
    return out;
  }
  /* path_query: `path.py:123` pasted alone. */
  function pathQuery(text) {
    text = text.trim();
    if (text.length > 1000) return null;
    var m = PATH_LINE.exec(text);
    if (!m) return null;
    return { exception: null, messages: [], frames: [{ path: m[1], line: +m[2], func: null, code: null }], role: "path", alone: false };
  }
  /* parse_paste: the blocks' exceptions (final first), plain lines, JSON string values. */
  function scan(text, depth, budget) {
    var query = pathQuery(text);
    if (query) return [query];
    var lines = readLines(text), got = readBlocks(lines);
    var raised = got.blocks.slice().reverse().map(function (b) { return exceptionOf(lines, b); });
    var alone = !got.blocks.length && lines.filter(function (l) { return !isBlank(l); }).length === 1;
    raised = raised.concat(plainMessages(lines, got.taken, alone));
    if (depth < MAX_JSON_DEPTH && budget[0] > 0 && text.indexOf("{") >= 0) {
      var values = jsonStrings(text, budget[0]);
      budget[0] -= values.length;
      values.forEach(function (value) {
        if (solid(value) < MIN_LITERAL) return;
        scan(value, depth + 1, budget).forEach(function (r) { r.alone = false; raised.push(r); });
      });
    }
    return raised;
  }
  function parsePaste(text) { return scan(text, 0, [MAX_JSON_VALUES]); }

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
  /* _loose_pattern: the template without the end punctuation of its last literal part. */
  function looseOf(entry) {
    if (entry.loose === undefined) {
      var parts = entry.parts.slice(), loose = null;
      if (parts.length && parts[parts.length - 1] !== 0) {
        var text = rstrip(parts[parts.length - 1] || "");
        var trimmed = rstrip(rstripChars(text, END_PUNCTUATION));
        if (trimmed !== text) { parts[parts.length - 1] = trimmed; loose = compileTemplate(parts); }
      }
      entry.loose = loose;
    }
    return entry.loose;
  }

  /* LookupIndex.__init__: per-document entries, sites by path, path suffixes,
     word weights, and the anchor index (candidates.py: AnchorIndex). */
  var prepared = null, suffixes = null, byName = null, sitesByPath = null, byWord = null, idf = null;
  var byGram = null, always = null;
  function grams(text) {
    var out = new Set();
    for (var k = 0; k + GRAM <= text.length; k++) out.add(text.substr(k, GRAM));
    return out;
  }
  function prepareAnchors() {
    var counts = new Map(), distinct = new Set();
    byGram = new Map(); always = [];
    prepared.forEach(function (entry, i) { if (docs[i][5] && entry.size >= MIN_LITERAL) distinct.add(entry.anchor); });
    distinct.forEach(function (anchor) { grams(anchor).forEach(function (g) { counts.set(g, (counts.get(g) || 0) + 1); }); });
    prepared.forEach(function (entry, i) {
      if (!docs[i][5] || entry.size < MIN_LITERAL) return;
      var anchor = entry.anchor;
      if (anchor.length < GRAM) { always.push(i); return; }
      var best = null;
      grams(anchor).forEach(function (g) {
        if (best === null || counts.get(g) < counts.get(best) || (counts.get(g) === counts.get(best) && g < best)) best = g;
      });
      if (!byGram.has(best)) byGram.set(best, new Map());
      var filed = byGram.get(best);
      if (!filed.has(anchor)) filed.set(anchor, []);
      filed.get(anchor).push(i);
    });
  }
  function prepare() {
    if (prepared) return;
    byWord = new Map(); sitesByPath = new Map();
    prepared = docs.map(function (doc, index) {
      var parts = doc[5] || [];
      var literal = normalize(parts.map(function (p) { return p === 0 ? "" : p; }).join(" "));
      var chunks = literal ? literal.split(" ").map(function (c) { return rstripChars(c, END_PUNCTUATION); }) : [];
      var anchor = chunks.reduce(function (a, b) { return b.length > a.length ? b : a; }, "");
      var words = new Set(literal.toLowerCase().match(WORD) || []);
      words.forEach(function (w) { if (!byWord.has(w)) byWord.set(w, []); byWord.get(w).push(index); });
      doc[6].forEach(function (s) {
        var path = paths[s[0]];
        if (!sitesByPath.has(path)) sitesByPath.set(path, []);
        sitesByPath.get(path).push([index, s]);
      });
      return { parts: parts, literal: literal, size: solid(literal), anchor: anchor, words: words, template: null };
    });
    suffixes = new Map(); byName = new Map();
    sitesByPath.forEach(function (_, path) {
      var comps = path.split("/");
      for (var n = Math.min(2, comps.length); n <= comps.length; n++) {
        var key = comps.slice(-n).join("/");
        if (!suffixes.has(key)) suffixes.set(key, new Set());
        suffixes.get(key).add(path);
      }
      var base = comps[comps.length - 1];
      if (!byName.has(base)) byName.set(base, new Set());
      byName.get(base).add(path);
    });
    var total = Math.max(prepared.length, 1);
    idf = new Map();
    byWord.forEach(function (ids, w) { idf.set(w, Math.log(1 + total / ids.length)); });
    prepared.forEach(function (entry) {
      entry.own = 0;
      entry.words.forEach(function (w) { entry.own += idf.get(w); });
    });
    prepareAnchors();
  }
  /* AnchorIndex.hits: the documents whose anchor is in a line. */
  function lineHits(line) {
    var out = new Set(always);
    grams(line).forEach(function (g) {
      var filed = byGram.get(g);
      if (filed) filed.forEach(function (ids, anchor) { if (line.indexOf(anchor) >= 0) ids.forEach(function (i) { out.add(i); }); });
    });
    return out;
  }
  /* LineHits: each line read once per paste; a line inside the line read
     last keeps those of its hits whose anchor it holds. */
  function makeHits() {
    var cache = new Map(), last = "", alwaysSet = new Set(always);
    function hitsOf(line) {
      var found = cache.get(line);
      if (found) return found;
      if (last && last.indexOf(line) >= 0) {
        found = new Set();
        cache.get(last).forEach(function (i) {
          if (alwaysSet.has(i) || line.indexOf(prepared[i].anchor) >= 0) found.add(i);
        });
      } else {
        found = lineHits(line); last = line;
      }
      cache.set(line, found);
      return found;
    }
    return function (text) {
      var out = new Set();
      text.split("\n").forEach(function (line) { hitsOf(line).forEach(function (i) { out.add(i); }); });
      return out;
    };
  }
  function smallest(set) { return Array.from(set).sort()[0]; }
  /* repo_path: the repository path a traceback path ends in, or null. */
  function repoPath(path) {
    var comps = path.replace(/\\/g, "/").split("/").filter(Boolean);
    for (var n = comps.length; n >= 1; n--) {
      var hit = suffixes.get(comps.slice(-n).join("/"));
      if (hit) return smallest(hit);
    }
    return null;
  }
  function lastName(dotted) {
    if (!dotted) return null;
    var name = dotted.split(".").pop();
    return /^[A-Za-z_]\w*$/.test(name) ? name : null;
  }
  function scopeName(scope) { return scope.split(".").pop(); }

  /* difflib.SequenceMatcher(None, a, b, autojunk=False).ratio(): no junk, so
     the longest matching block of each range is the plain longest common
     substring (earliest in a, then in b), and the ratio 2 * matches / total. */
  function ratio(a, b) {
    var b2j = new Map();
    for (var j = 0; j < b.length; j++) {
      var c = b.charAt(j);
      if (!b2j.has(c)) b2j.set(c, []);
      b2j.get(c).push(j);
    }
    function longest(alo, ahi, blo, bhi) {
      var besti = alo, bestj = blo, bestsize = 0, j2len = new Map();
      for (var i = alo; i < ahi; i++) {
        var next = new Map(), js = b2j.get(a.charAt(i)) || [];
        for (var x = 0; x < js.length; x++) {
          var jj = js[x];
          if (jj < blo) continue;
          if (jj >= bhi) break;
          var k = (j2len.get(jj - 1) || 0) + 1;
          next.set(jj, k);
          if (k > bestsize) { besti = i - k + 1; bestj = jj - k + 1; bestsize = k; }
        }
        j2len = next;
      }
      return [besti, bestj, bestsize];
    }
    var matches = 0, queue = [[0, a.length, 0, b.length]];
    while (queue.length) {
      var q = queue.pop(), m = longest(q[0], q[1], q[2], q[3]);
      if (!m[2]) continue;
      matches += m[2];
      if (q[0] < m[0] && q[2] < m[1]) queue.push([q[0], m[0], q[2], m[1]]);
      if (m[0] + m[2] < q[1] && m[1] + m[2] < q[3]) queue.push([m[0] + m[2], q[1], m[1] + m[2], q[3]]);
    }
    var total = a.length + b.length;
    return total ? 2 * matches / total : 1;
  }
  /* code_similarity */
  function codeSimilarity(shown, own) {
    var a = normalize(shown).slice(0, MAX_CODE), b = normalize(own).slice(0, MAX_CODE);
    if (a === b) return 1;
    var head = CODE_HEAD.exec(a);
    if (!head || b.indexOf(head[0]) !== 0) return 0;
    return ratio(a, b);
  }

  /* Matcher.message_scores: coverage of a message by every template that
     matches it (only those whose anchor a line holds), and whether only with
     the end punctuation aside: index -> [coverage, loose]. */
  function messageScores(text, hits) {
    text = text.slice(0, MAX_MESSAGE);
    var out = new Map(), candidates = hits(text);
    if (!candidates.size) return out;
    var read = solidOf(text), size = read.text.length;
    if (!size) return out;
    var trimmed = rstripChars(rstrip(text), END_PUNCTUATION), loose = solidOf(trimmed);
    candidates.forEach(function (i) {
      var entry = prepared[i];
      if (entry.size > size || text.indexOf(entry.anchor) < 0) return;
      var coverage = Math.min(entry.size / size, 1);
      if (coverage < MIN_COVERAGE && entry.size < MIN_SPECIFIC) return;
      if (matchSolid(templateOf(entry), read)) { out.set(i, [coverage, false]); return; }
      var pattern = looseOf(entry);
      if (pattern && loose.text && matchSolid(pattern, loose)) {
        out.set(i, [Math.min(entry.size / Math.max(loose.text.length, 1), 1), true]);
      } else if (!pattern && trimmed !== rstrip(text) && loose.text && matchSolid(templateOf(entry), loose)) {
        out.set(i, [coverage, true]);
      }
    });
    return out;
  }
  function fragmentScores(text) {
    var needle = normalize(text.slice(0, MAX_MESSAGE)), out = new Map();
    var truncated = /(\.\.\.|\u2026)$/.test(needle);
    needle = rstrip(rstripChars(needle, END_PUNCTUATION));
    if (solid(needle) < MIN_FRAGMENT) return out;
    prepared.forEach(function (entry, i) {
      if (!docs[i][5] || entry.literal.indexOf(needle) < 0) return;
      if (!entry.parts.some(function (p) { return p !== 0 && normalize(p).indexOf(needle) >= 0; })) return;
      var share = Math.min(solid(needle) / Math.max(entry.size, 1), 1);
      if (truncated && entry.literal.indexOf(needle) === 0) share = Math.min(share + 0.3, 1);
      out.set(i, share);
    });
    return out;
  }
  function wordScores(text) {
    var words = new Set((text.slice(0, MAX_MESSAGE).toLowerCase().match(WORD) || []).filter(function (w) { return idf.has(w); }));
    var out = new Map();
    if (!words.size) return out;
    var hits = new Map(), query = 0;
    words.forEach(function (w) {
      query += idf.get(w);
      byWord.get(w).forEach(function (i) { hits.set(i, (hits.get(i) || 0) + idf.get(w)); });
    });
    var scored = [];
    hits.forEach(function (shared, i) { scored.push([i, shared / (query + prepared[i].own - shared)]); });
    scored.sort(function (a, b) { return round9(b[1]) - round9(a[1]) || a[0] - b[0]; });
    scored.slice(0, MAX_WORD_CANDIDATES).forEach(function (x) { out.set(x[0], x[1]); });
    return out;
  }
  function round9(x) { return Math.round(x * 1e9) / 1e9; }

  /* frame_evidence (miner/lookup/frames.py): what the frames of one exception say about each error. */
  function pinAlike(ev, alike, moved) {
    if (!alike.length) return;
    var top = Math.max.apply(null, alike.map(function (x) { return x[0]; }));
    var leaders = new Set(alike.filter(function (x) { return x[0] === top; }).map(function (x) { return x[1]; }));
    alike.forEach(function (x) {
      var where = paths[x[2][0]] + " in " + x[2][3] + (moved ? "; the file moved" : "");
      if (x[0] === top && leaders.size === 1) {
        var strength = x[0] === 1 ? 0.85 : 0.8 + 0.16 * (x[0] - SIMILAR_CODE);
        ev.pin(x[1], x[2], strength, "a traceback frame shows " + (x[0] === 1 ? "its line" : "a line like its own") + " (" + where + ")");
      } else {
        ev.pin(x[1], x[2], 0.6, "a traceback frame shows a line like its own (" + where + ")");
      }
    });
  }
  function sameFile(ev, frame, path, innermost) {
    var code = frame.code ? normalize(frame.code).slice(0, MAX_CODE) : null, alike = [];
    (sitesByPath.get(path) || []).forEach(function (pair) {
      var i = pair[0], site = pair[1];
      ev.sameFile.add(i);
      var scoped = frame.func === null || scopeName(site[3]) === frame.func;
      if (scoped && frame.func !== null) ev.sameScope.add(i);
      if (!innermost && site[4] !== "call") return;
      var similar = code !== null && site[5] ? codeSimilarity(code, site[5]) : 0;
      var inside = site[1] <= frame.line && frame.line <= site[2];
      if (inside && (similar >= SIMILAR_CODE || (code === null && scoped))) {
        ev.pin(i, site, 0.9, "a traceback frame points at " + path + ":" + site[1]);
      } else if (similar >= SIMILAR_CODE && scoped && frame.func !== null) {
        alike.push([similar, i, site]);
      }
    });
    return alike;
  }
  function folders(path) {
    var comps = path.replace(/\\/g, "/").split("/");
    return new Set(comps.slice(0, -1).filter(Boolean));
  }
  /* _moved_file: sites of the frame's function in files of its name elsewhere, by source line. */
  function movedFile(frame, innermost) {
    if (frame.code === null || frame.func === null) return [];
    var code = normalize(frame.code).slice(0, MAX_CODE), alike = [];
    if (/[(\[{\\]$/.test(code)) return [];
    var own = folders(frame.path), name = frame.path.replace(/\\/g, "/").split("/").pop();
    Array.from(byName.get(name) || []).sort().forEach(function (path) {
      var shared = 0;
      folders(path).forEach(function (f) { if (own.has(f)) shared++; });
      if (shared < 2) return;
      sitesByPath.get(path).forEach(function (pair) {
        var site = pair[1];
        if (scopeName(site[3]) !== frame.func || !(innermost || site[4] === "call") || !site[5]) return;
        var similar = codeSimilarity(code, site[5]);
        if (similar >= SIMILAR_CODE) alike.push([similar, pair[0], site]);
      });
    });
    return alike;
  }
  function frameEvidence(frames) {
    var ev = { pinned: new Map(), sameScope: new Set(), sameFile: new Set(), raisedHere: false };
    ev.pin = function (i, site, strength, reason) {
      var cur = ev.pinned.get(i);
      if (!cur || strength > cur[1]) ev.pinned.set(i, [site, strength, reason]);
    };
    var last = frames.length - 1;
    for (var position = last; position >= 0; position--) {
      var frame = frames[position], path = repoPath(frame.path);
      if (path === null) { pinAlike(ev, movedFile(frame, position === last), true); continue; }
      ev.raisedHere = ev.raisedHere || position === last;
      pinAlike(ev, sameFile(ev, frame, path, position === last), false);
    }
    return ev;
  }

  /* _combine: one error's score from the evidence: [score, site or null, reasons]. */
  function combine(i, ev, message, fragment, words) {
    var reasons = [], pinned = ev.pinned.get(i), strength = pinned ? pinned[1] : 0, coverage = 0, value;
    if (message) {
      coverage = message[0];
      reasons.push("message matches the template (" + Math.round(100 * coverage) + "% literal" + (message[1] ? ", end punctuation aside" : "") + ")");
      if (message[1]) coverage *= 0.98;
    }
    if (pinned) reasons.push(pinned[2]);
    if (pinned && strength >= 0.8) return [message ? 0.95 + 0.05 * message[0] : strength, pinned[0], reasons];
    if (message) {
      value = 0.55 + 0.35 * coverage;
      if (pinned || ev.sameScope.has(i)) {
        value += 0.07;
        if (!pinned) reasons.push("a traceback frame runs in its function");
      } else if (ev.sameFile.has(i)) {
        value += 0.05; reasons.push("a traceback frame runs in its file");
      } else if (ev.raisedHere) {
        value *= 0.8; reasons.push("the traceback runs in none of its files");
      }
    } else if (pinned) {
      value = 0.5 + 0.1 * Math.max(fragment || 0, words || 0);
    } else if (fragment !== undefined) {
      value = 0.5 + 0.3 * fragment; reasons.push("the text is part of the message");
    } else {
      value = 0.45 * (words || 0);
      reasons.push("shares words with the message (" + Math.round(100 * (words || 0)) + "%)");
    }
    return [value, pinned ? pinned[0] : null, reasons];
  }
  function better(a, b) { return !b || a[0] > b[0] || (a[0] === b[0] && a[1] && !b[1]); }

  /* LookupIndex.score: index -> [score, site or null, reasons] for one parsed exception. */
  function scoreRaised(raised, hits, words) {
    var ev = frameEvidence(raised.frames), message = new Map();
    raised.messages.forEach(function (text) {
      messageScores(text, hits).forEach(function (found, i) { if (better(found, message.get(i))) message.set(i, found); });
    });
    var fragment = new Map();
    if (message.size || !raised.messages.length) words = new Map();
    if (raised.alone && !message.size && raised.messages.length) fragment = fragmentScores(raised.messages[0]);
    var shown = lastName(raised.exception), out = new Map();
    var candidates = new Set([].concat(Array.from(ev.pinned.keys()), Array.from(message.keys()),
      Array.from(fragment.keys()), Array.from(words.keys())));
    candidates.forEach(function (i) {
      var got = combine(i, ev, message.get(i), fragment.get(i), words.get(i));
      var value = got[0], own = lastName(docs[i][1]);
      if (shown && own && got[1] === null) {
        if (shown === own) { value += 0.02; got[2].push("same exception type " + shown); }
        else {
          var weak = !message.has(i) || message.get(i)[0] < WEAK_COVERAGE;
          value *= weak ? 0.75 : 0.85;
          got[2].push("exception type differs (" + shown + " shown, " + own + " raised here)");
        }
      }
      out.set(i, [Math.min(value, 1), got[1], got[2]]);
    });
    if (raised.role === "path") pathScores(raised, out);
    return out;
  }
  /* _path_scores: every error raised in the file of a pasted path.py:123. */
  function pathScores(raised, out) {
    raised.frames.forEach(function (frame) {
      var found = repoPath(frame.path);
      var files = found !== null ? [found] : Array.from(byName.get(frame.path.replace(/\\/g, "/").split("/").pop()) || []).sort();
      files.forEach(function (path) {
        (sitesByPath.get(path) || []).forEach(function (pair) {
          var i = pair[0], site = pair[1];
          if (site[1] <= frame.line && frame.line <= site[2]) {
            if (!out.has(i) || out.get(i)[0] < 0.9) out.set(i, [0.9, site, ["the path and line point at " + path + ":" + site[1]]]);
          } else if (!out.has(i)) {
            out.set(i, [files.length === 1 ? 0.6 : 0.5, site, ["raised in " + path]]);
          }
        });
      });
    });
  }

  /* A path or folder typed in the box (`sglang/srt/mem_cache/`): the errors raised under it. */
  function matchFolder(text, best) {
    var m = /^\s*([^\s":,]*\/[^\s":,]*)\s*$/.exec(text);
    if (!m) return;
    var query = m[1].replace(/\\/g, "/");
    sitesByPath.forEach(function (pairs, path) {
      if (path.indexOf(query) < 0) return;
      pairs.forEach(function (pair) {
        if (!best.has(pair[0])) best.set(pair[0], { index: pair[0], score: 0.5, reasons: ["raised in " + path], site: pair[1] });
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

  /* LookupIndex.search: ranked results [{index, score, reasons, site}], best first. */
  function search(text) {
    prepare();
    var best = new Map(), hits = makeHits();
    var raised = parsePaste(text);
    var first = -1;
    raised.some(function (r, n) { if (r.messages.length) { first = n; return true; } return false; });
    var words = first >= 0 ? wordScores(raised[first].messages[0]) : new Map();
    raised.forEach(function (r, position) {
      var weight = r.role === "final" || r.role === "message" || r.role === "path" ? 1 : 0.97;
      scoreRaised(r, hits, position === first ? words : new Map()).forEach(function (got, i) {
        var value = Math.round(got[0] * weight * 1e4) / 1e4, cur = best.get(i);
        if (!cur || value > cur.score) best.set(i, { index: i, score: value, reasons: got[2], site: got[1] || docs[i][6][0] });
      });
    });
    if (!raised.length) matchFolder(text, best);
    var ranked = Array.from(best.values());
    if (!ranked.some(function (r) { return r.score >= GOOD; }) && typeof MiniSearch !== "undefined") {
      var query = raised.length && raised[0].messages.length ? raised[0].messages[0] : text;
      var hits = fullText().search(query.slice(0, 500)).slice(0, 20);
      var top = hits.length ? hits[0].score : 1;
      hits.forEach(function (h) {
        var score = 0.45 * h.score / top, cur = best.get(h.id);
        if (!cur || cur.score < score) best.set(h.id, { index: h.id, score: score, reasons: ["shares words with the text"], site: docs[h.id][6][0] });
      });
      ranked = Array.from(best.values());
    }
    ranked.sort(function (a, b) { return b.score - a.score || (docs[a.index][0] < docs[b.index][0] ? -1 : docs[a.index][0] > docs[b.index][0] ? 1 : 0); });
    return ranked;
  }
  root.raiseMinerSearch = search;
  /* The matcher alone, for tests: parts as in search-data.js (0 a placeholder). */
  search.matchesTemplate = function (parts, message) {
    return matchSolid(compileTemplate(parts), solidOf(message));
  };
  /* The paste parser and the source line similarity alone, for tests. */
  search.parsePaste = parsePaste;
  search.codeSimilarity = codeSimilarity;
  if (typeof document === "undefined") return;  // run outside a page (node): the matcher only

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
