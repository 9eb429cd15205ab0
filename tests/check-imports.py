#!/usr/bin/env python3
"""The import graph of `src/`, file by file: no circles, no upward imports.

Run by the test command (`tests/run-all.sh`); anyone can run it:

    python3 tests/check-imports.py            # check; exit 1 on a violation
    python3 tests/check-imports.py --graph    # also print every file's imports
    python3 tests/check-imports.py --dot      # the layer graph for Graphviz

What counts as an import: every path a file names that resolves to another
file of the crate -- `use crate::a::b`, `use super::x`, `pub use child::Y`,
and paths written in code (`crate::a::b::f()`, `alias::Item` after
`use crate::a::alias`). Declaring a child (`mod x;`) is not an import.
Code that only tests compile is left out (`#[cfg(test)]` items, files named
`tests.rs`), so a test may use anything. `main.rs` and `cmd/` are the binary
(the top); `fuzzing.rs` and the `bench*` modules are tools above the server.

Two rules, both read from ARCHITECTURE.md ("Layers"), so the documentation
and the check cannot disagree:
1. No circle between files: the files' import graph is acyclic.
2. Every top-level module of `src/` sits in one layer; a file imports only
   from its own layer's modules or lower ones, except the imports the
   section lists under "Allowed upward imports" with their reasons.
A circle the section lists under "Allowed circles" (its files, exactly)
passes; an allowance that no longer happens fails, so the list stays true.

Deliberately not done: macros (`crate::` inside `macro_rules!` bodies counts
like code), and `#[path]` attributes (the crate has none; one fails the check).
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")
ARCH = os.path.join(ROOT, "ARCHITECTURE.md")


def module_of(rel):
    """src-relative file path -> module path tuple (crate = ())."""
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def strip(text):
    """Comments, strings and char literals become blanks (lines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.compile(r'b?r(#*)"').match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == "'":
            m = re.compile(r"'(\\(x..|u\{[0-9a-fA-F]+\}|.)|[^\\'])'").match(text, i)
            if m:
                out.append("' '")
                i = m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def drop_test_items(code):
    """Blank out `#[cfg(test)]` items (a `mod … { }`, a `use …;`, a fn)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]", code)
        if not m:
            return code
        j = m.end()
        # the item ends at its first `;` before any `{`, or at the `}` that
        # closes its first `{`
        k = j
        while k < len(code) and code[k] not in ";{":
            k += 1
        if k < len(code) and code[k] == "{":
            depth = 0
            while k < len(code):
                if code[k] == "{":
                    depth += 1
                elif code[k] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
        end = min(k + 1, len(code))
        code = code[: m.start()] + "\n" * code.count("\n", m.start(), end) + code[end:]


def expand_use(tree):
    """`a::{b, c::{d, e as f}, self}` -> [("a","b"), ("a","c","d"), …]."""
    tree = re.sub(r"\s+as\s+", "@", tree)
    tree = re.sub(r"\s+", "", tree)
    paths = []

    def walk(prefix, s):
        # split s on top-level commas
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        for p in parts:
            if "{" in p:
                head, rest = p.split("{", 1)
                head = [x for x in head.split("::") if x]
                walk(prefix + head, rest[: rest.rfind("}")])
            else:
                seg, _, alias = p.partition("@")
                segs = [x for x in seg.split("::") if x]
                if segs == ["self"]:
                    paths.append((tuple(prefix), alias or (prefix[-1] if prefix else None)))
                elif segs:
                    paths.append((tuple(prefix + segs), alias or segs[-1]))

    walk([], tree)
    return paths


class Crate:
    def __init__(self):
        self.files = {}  # module tuple -> src-relative path
        for dirpath, _, names in os.walk(SRC):
            for name in names:
                if name.endswith(".rs"):
                    rel = os.path.relpath(os.path.join(dirpath, name), SRC).replace(os.sep, "/")
                    if rel == "main.rs":
                        continue
                    self.files[module_of(rel)] = rel

    def file_for(self, path):
        """Longest prefix of a module path that is a file."""
        for k in range(len(path), -1, -1):
            if path[:k] in self.files:
                return self.files[path[:k]], path[:k]
        return None, None

    def is_module(self, path):
        return path in self.files or any(m[: len(path)] == path for m in self.files)


def absolute(crate, here, segs):
    """Resolve a path's first segments relative to module `here`."""
    segs = list(segs)
    if not segs:
        return None
    if segs[0] == "crate":
        return tuple(segs[1:])
    if segs[0] == "self":
        return here + tuple(segs[1:])
    if segs[0] == "super":
        base = list(here)
        while segs and segs[0] == "super":
            base = base[:-1]
            segs = segs[1:]
        return tuple(base + segs)
    # a child module of this one (2018 uniform paths)
    if crate.is_module(here + (segs[0],)):
        return here + tuple(segs)
    return None


def imports_of(crate, mod, rel):
    text = open(os.path.join(SRC, rel), encoding="utf-8").read()
    if "#[path" in text:
        raise SystemExit(f"{rel}: #[path] attributes are not understood by this check")
    code = drop_test_items(strip(text))
    found = []  # (target module tuple, line)
    aliases = {}
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        line = code.count("\n", 0, m.start()) + 1
        for path, alias in expand_use(m.group(1)):
            if path and path[-1] == "*":
                path = path[:-1]
            target = absolute(crate, mod, path)
            if target is None:
                continue
            found.append((target, line))
            if alias and crate.is_module(target):
                aliases[alias] = target
    # paths written in code
    starts = ["crate", "super", "self"] + sorted(aliases)
    pat = re.compile(r"(?<![\w:])(" + "|".join(map(re.escape, starts)) + r")((?:::\w+)+)")
    for m in pat.finditer(code):
        segs = [m.group(1)] + m.group(2).split("::")[1:]
        line = code.count("\n", 0, m.start()) + 1
        if segs[0] in aliases and segs[0] not in ("crate", "super", "self"):
            target = aliases[segs[0]] + tuple(segs[1:])
        else:
            target = absolute(crate, mod, segs)
        if target is not None:
            found.append((target, line))
    # and children named in code without `use` (`child::f()`)
    for m in re.finditer(r"(?<![\w:])(\w+)((?:::\w+)+)", code):
        if m.group(1) in starts:
            continue
        if crate.is_module(mod + (m.group(1),)) and (mod + (m.group(1),)) != mod:
            segs = [m.group(1)] + m.group(2).split("::")[1:]
            found.append((mod + tuple(segs), code.count("\n", 0, m.start()) + 1))
    edges = {}
    for target, line in found:
        f, _ = crate.file_for(target)
        if f is None or f == rel or f == "lib.rs":
            continue
        edges.setdefault(f, line)
    return edges


def is_test_file(rel):
    return rel.endswith("/tests.rs") or rel == "tests.rs"


def graph():
    crate = Crate()
    g = {}
    for mod, rel in sorted(crate.files.items(), key=lambda x: x[1]):
        if rel == "lib.rs" or is_test_file(rel):
            continue
        g[rel] = {t: l for t, l in imports_of(crate, mod, rel).items() if not is_test_file(t)}
    return g


def cycles(g):
    """Tarjan's strongly connected components of more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def top(rel):
    return rel.split("/")[0].removesuffix(".rs")


def read_layers():
    """ARCHITECTURE.md, section "## Layers": `N. name, name` lines, bottom
    first; "Allowed upward imports" lines `- `from.rs` → `to.rs`: why`; and
    "Allowed circles" lines `- `a.rs`, `b.rs`: why` (the circle's files,
    exactly)."""
    text = open(ARCH, encoding="utf-8").read()
    m = re.search(r"^## Layers\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        raise SystemExit("ARCHITECTURE.md has no `## Layers` section")
    section = m.group(1)
    layer, allowed, circles = {}, set(), set()
    for lm in re.finditer(r"^(\d+)\.\s+(.*?)(?=^\d+\.|\n\n)", section, re.M | re.S):
        # the module names are the backquoted words before the colon
        for name in re.findall(r"`(\w+)`", lm.group(2).split(":")[0]):
            layer[name] = int(lm.group(1))
    for am in re.finditer(r"^- `([\w/.]+)` → `([\w/.]+)`:", section, re.M):
        allowed.add((am.group(1), am.group(2)))
    for cm in re.finditer(r"^- ((?:`[\w/.]+\.rs`,?\s*)+):", section, re.M):
        circles.add(frozenset(re.findall(r"`([\w/.]+\.rs)`", cm.group(1))))
    return layer, allowed, circles


def main():
    g = graph()
    problems = []
    layer, allowed, allowed_circles = read_layers()
    seen_circles = set()
    for comp in cycles(g):
        if frozenset(comp) in allowed_circles:
            seen_circles.add(frozenset(comp))
            continue
        edges = [f"    {a}:{g[a][b]} → {b}" for a in comp for b in sorted(g[a]) if b in comp]
        problems.append(f"circle of {len(comp)} files:\n" + "\n".join(edges))
    for c in sorted(allowed_circles - seen_circles, key=sorted):
        problems.append(f"ARCHITECTURE.md allows the circle {', '.join(sorted(c))}, which no longer is one")
    used_allowances = set()
    for rel in sorted(g):
        t = top(rel)
        if t not in layer:
            problems.append(f"{rel}: its module `{t}` is in no layer of ARCHITECTURE.md")
            continue
        for dest, line in sorted(g[rel].items()):
            d = top(dest)
            if d in layer and layer[d] > layer[t]:
                if (rel, dest) in allowed:
                    used_allowances.add((rel, dest))
                else:
                    problems.append(
                        f"{rel}:{line} imports {dest}: layer {layer[t]} (`{t}`) "
                        f"imports from layer {layer[d]} (`{d}`)"
                    )
    for a in sorted(allowed - used_allowances):
        problems.append(f"ARCHITECTURE.md allows `{a[0]}` → `{a[1]}`, which no longer happens")
    if "--graph" in sys.argv:
        for rel in sorted(g):
            print(rel)
            for dest, line in sorted(g[rel].items()):
                print(f"    → {dest} (line {line})")
    if "--dot" in sys.argv:
        print("digraph layers {")
        seen = set()
        for rel in g:
            for dest in g[rel]:
                e = (top(rel), top(dest))
                if e[0] != e[1] and e not in seen:
                    seen.add(e)
                    print(f'  "{e[0]}" -> "{e[1]}";')
        print("}")
    files = len(g)
    nedges = sum(len(v) for v in g.values())
    if problems:
        print("\n".join(problems))
        print(f"\n{len(problems)} problem(s) in {files} files, {nedges} imports")
        sys.exit(1)
    print(
        f"imports: {files} files, {nedges} imports; no circle and none upward "
        f"but the {len(allowed_circles)} circles and {len(allowed)} imports ARCHITECTURE.md allows"
    )


if __name__ == "__main__":
    main()
