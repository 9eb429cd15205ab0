#!/usr/bin/env python3
"""Checks the documentation's relative links (issue 37).

Every relative link and `#anchor` in README.md, ARCHITECTURE.md and
docs/src/*.md (and the files they link to, for anchors) must resolve: the
file exists, and an anchor matches the slug of one of the target's
headings as GitHub and mdBook make it. Exits 1 naming each broken link.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LINK = re.compile(r"(?<!\\)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")


def prose_lines(text):
    """The lines outside fenced and indented code blocks, with their numbers."""
    fence = None
    prev_blank = True
    for n, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            prev_blank = False
            continue
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fence = stripped[:3]
            continue
        if line.startswith("    ") and prev_blank and not stripped.startswith(("-", "*", "|")):
            continue  # an indented code block (stays one while lines stay indented)
        prev_blank = not line.strip()
        yield n, re.sub(r"`[^`]*`", "``", line)


def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "")
    text = re.sub(r"<[^>]+>", "", text)
    out = []
    for ch in text.strip().lower():
        if ch.isalnum() or ch in "_-":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


_anchors = {}


def expand_includes(path):
    """The text as mdBook builds it: `{{#include FILE}}` replaced by FILE."""
    with open(path, encoding="utf-8") as f:
        text = f.read()

    def include(m):
        inc = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
        with open(inc, encoding="utf-8") as f:
            return f.read()

    return re.sub(r"\{\{#include\s+([^}\s:]+)\s*\}\}", include, text)


def anchors(path):
    if path not in _anchors:
        found, seen = set(), {}
        text = expand_includes(path)
        fence = None
        for line in text.split("\n"):
            s = line.lstrip()
            if fence:
                if s.startswith(fence):
                    fence = None
                continue
            if s.startswith("```") or s.startswith("~~~"):
                fence = s[:3]
                continue
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
        for m in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', text):
            found.add(m.group(1))
        _anchors[path] = found
    return _anchors[path]


def files():
    yield os.path.join(ROOT, "README.md")
    yield os.path.join(ROOT, "ARCHITECTURE.md")
    for d, _, names in sorted(os.walk(os.path.join(ROOT, "docs", "src"))):
        for name in sorted(names):
            if name.endswith(".md"):
                yield os.path.join(d, name)


def main():
    broken = []
    checked = 0
    for path in files():
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        prose = list(prose_lines(text))
        for i, (n, line) in enumerate(prose):
            # A link's text may wrap onto the next line: each link is read
            # on the line it starts on, with the next prose line beside it.
            nxt = prose[i + 1][1] if i + 1 < len(prose) and prose[i + 1][0] == n + 1 else ""
            for m in LINK.finditer(line + "\n" + nxt):
                if m.start() > len(line):
                    continue
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # http:, https:, mailto:
                checked += 1
                file_part, _, anchor = target.partition("#")
                dest = path if not file_part else os.path.normpath(
                    os.path.join(os.path.dirname(path), file_part))
                if not os.path.exists(dest):
                    broken.append(f"{rel}:{n}: {target}: no file {os.path.relpath(dest, ROOT)}")
                    continue
                if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    broken.append(f"{rel}:{n}: {target}: no heading with the anchor #{anchor} "
                                  f"in {os.path.relpath(dest, ROOT)}")
    for b in broken:
        print(b)
    print(f"check-links: {checked} relative links, {len(broken)} broken", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
