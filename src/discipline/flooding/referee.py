#!/usr/bin/env python3
"""The flooding island (freiesMagazin 2012): a participant's home referee.

This one file (Python 3.9 or newer, standard library only) plays the game of
the KNOBELN contest server with your bot on your own machine: the same rules,
the same island format, the same flood cards drawn from the same seed, and
the same lines, in the same order. For the same island, seed, round cap and
bot answers, the transcript it writes equals the server's line for line.

Running it
----------
A bot is a program that reads the referee's lines on its standard input and
prints its commands on its standard output, one a line (flush after every
round!). Give its command line as one argument (it is split like a shell
would split it, but not run by a shell):

    gcc -O2 -o mybot mybot.c
    python3 referee.py --island lagoon.txt --seed 17 ./mybot

    python3 referee.py --island lagoon.txt --seed 17 'python3 mybot.py'

Options:
    --island FILE       the island, in the contest's text format (required)
    --seed N            the game's seed, 0 to 2^64-1 (default 1, as
                        `knobeln play`)
    --max-rounds N      the round cap (default 2000, the server's)
    --transcript FILE   write the full transcript there (default: stdout)
    --moves FILE        also write the compact moves form there
    --reply-secs S      wall-clock seconds the bot has for each line
                        (default 10)
    --match-secs S      wall-clock seconds the bot may be waited for in
                        all in the game, its start-up and its lines
                        together (default 410, the server's)
    --name0 NAME        the bot's name in the header (default: the file
                        name of the command, without extension)
    --expand FILE       read a moves form (e.g. from the contest's mail) and
                        write its full transcript; no bot is run, the island,
                        seed and round cap come from the moves' header

A short result goes to standard error. The bot's own standard error is
passed through to the terminal, so you can debug with it. Exit status 0:
the game was refereed (whatever the bot did); 2: a usage error (bad option,
unreadable or invalid island, a command that cannot be started, a moves file
that cannot be read).

Limits: the server gives a bot 0.1 s of CPU time per round, counted over
the game (by round Z it may have used its start-up allowance and Z times
0.1 s in all), a game at most 60 s of CPU time and 256 MB of memory. This referee
does not measure CPU time or memory: it only has the wall clock. It waits
at most --reply-secs for each line, and, as the server, at most
--match-secs for the bot in all in the game, its start-up and its lines
together (default 410 s, the server's: the start-up's 10 s and twice
0.1 s for each of the 2000 rounds of the longest game). A bot that is
fast enough here may still be too slow on the server. Where the server
decides by the clock (a bot that is too slow, or ends while the referee
writes to it), the point where the failure is noticed can differ; the
lines the bot printed before are the same. It runs on Linux and macOS
(not on Windows: it uses process groups and select on pipes).

The game, in short
------------------
At the start the bot gets `GAMEBOARDSTART X,Y`, the Y rows of the island
(`#` dry, `o` flooded, `.` water), `GAMEBOARDEND`. Then each round: the bot
gets `ROUND Z X,Y` (its position) and prints exactly three commands, each
`GO d` or `DRY d` with d one of NORTH, EAST, SOUTH, WEST, CURRENT (a
trailing CR is tolerated, nothing else). Each command takes effect when it is
read. Then the bot gets `INCRFLOOD 0` or `INCRFLOOD 1` and one `FLOOD X,Y`
per field flooded (as many as the flood level). Walking onto water (or off
the board) drowns at once: the rest of the round's commands are read but not
carried out, the round's INCRFLOOD and FLOOD lines still come (as the 2012
engine sent them), then END. A bot whose field sinks
drowns too. At the end the bot gets `END`. The score is the round the game
ended in (the round cap when the bot survived; the rounds completed when it
broke the protocol, crashed or was too slow). All of it is in the contest's
rules; this file is the exact reference of the line protocol.

The transcript (full form)
--------------------------
    # knobeln transcript 2: flooding
    # seed: 17
    # max_rounds: 2000
    # island: lagoon
    # island-text: GAMEBOARDSTART 12,8
    # island-text: ............          (every line of the island)
    # player 1: mybot
    to 1: GAMEBOARDSTART 12,8
    ...
    from 1: GO CURRENT
    ...
    to 1: END
    # failure: player 1: ...               (only if the bot failed)
    # result: ...

`to 0:` is a line the referee sent, `from 0:` a line the bot printed (after
its line end and one CR were removed), in the order the server notes them:
after a line that breaks a rule that line, then `END`; after a failure
outside the rules (the bot ended, crashed, printed an overlong or non-UTF-8
line, gave no answer in time) the game just stops there. Control characters
in a line are written as `\\xNN` and a backslash as `\\\\`, so every exchange
stays one line. Lines beginning with `#` are comments; only the `to` and
`from` lines are compared with the server.

The moves form (compact)
------------------------
    # knobeln moves 2: flooding
    # seed: 17
    # max_rounds: 2000
    # island: lagoon
    # island-text: ...
    # player 1: mybot
    1: GO CURRENT
    1: DRY NORTH
    ...
    ! 1: <reason>          (the bot failed outside the rules here)
    = 1234                 (after a `!` line: the transcript's lines)

Only what the bot printed; everything else follows from the rules, the
island and the seed. `= N` says how many lines the transcript had: a bot
that quit is noticed where a write to it fails, which the rules alone cannot
tell. `--expand` turns it into the full form: each line the game asks the
bot for is the next move; a move that breaks a rule is noted, then `END`;
when the moves run out before the game is over, the bot of a `!` line
forfeits and the transcript stops (cut to its first N lines by `= N`).
"""

import argparse
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import time

DISCIPLINE = "flooding"
FULL_MAGIC = "# knobeln transcript 2: "
MOVES_MAGIC = "# knobeln moves 2: "
# Format 1 (players numbered from 0 as seats): read by --expand, not written.
FULL_MAGIC_1 = "# KNOBELN transcript 1: "
MOVES_MAGIC_1 = "# KNOBELN moves 1: "
N_SEATS = 1

# ---------------------------------------------------------------------------
# Chance: the server's SplitMix64, bit for bit (src/seed.rs).

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def derive(seed, path):
    h = mix((seed ^ 0x4B4E4F42454C4E00) & MASK)
    for i, p in enumerate(path):
        h = mix(h ^ mix((p + (i + 1) * GOLDEN) & MASK))
    return h


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next_u64(self):
        self.state = (self.state + GOLDEN) & MASK
        return mix(self.state)

    def below(self, n):
        """Uniform in 0..n (Lemire's method with rejection)."""
        threshold = ((-n) & MASK) % n
        while True:
            m = self.next_u64() * n
            if (m & MASK) >= threshold:
                return m >> 64

    def shuffle(self, items):
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


# ---------------------------------------------------------------------------
# Rust-like text helpers.

# Rust's char::is_whitespace (Unicode White_Space), for str::trim.
RUST_WS = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
           "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def rust_trim(s):
    return s.strip(RUST_WS)


def is_control(c):
    o = ord(c)
    return o < 0x20 or 0x7F <= o <= 0x9F


def escape_default(c):
    return {"\t": "\\t", "\r": "\\r", "\n": "\\n"}.get(c, "\\u{%x}" % ord(c))


def counted(n, one, many):
    """`n` and the noun in the number `n` asks for: "1 round", "2 rounds"
    (the server's words::counted)."""
    return "1 %s" % one if n == 1 else "%d %s" % (n, many)


def debug_str(s):
    """Rust's `{:?}` of a string (close enough for messages)."""
    out = ['"']
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif is_control(c):
            out.append(escape_default(c))
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def debug_char(c):
    if c in "'\\":
        return "'\\" + c + "'"
    if is_control(c):
        return "'" + escape_default(c) + "'"
    return "'" + c + "'"


def secs(ms):
    """Rust's `{}` of an f64 number of seconds."""
    v = ms / 1000.0
    return str(int(v)) if v == int(v) else repr(v)


SHOWN_LINE_CHARS = 200


def show_line(line):
    """An offending line as a report shows it (escaped, capped)."""
    out = []
    n = 0
    for c in line:
        shown = escape_default(c) if is_control(c) else c
        if n + len(shown) > SHOWN_LINE_CHARS:
            out.append("\u2026")
            break
        n += len(shown)
        out.append(shown)
    return "".join(out)


def quote(line):
    """A line as written after `to S: ` or `S: `: control characters as
    `\\xNN`, a backslash doubled."""
    out = []
    for c in line:
        o = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif o < 0x20 or o == 0x7F:
            out.append("\\x%02x" % o)
        else:
            out.append(c)
    return "".join(out)


def unquote(s):
    out = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = s[i + 1] if i + 1 < n else None
        if nxt == "\\":
            out.append("\\")
            i += 2
        elif nxt == "x":
            hx = s[i + 2:i + 4]
            if len(hx) == 2 and all(ch in "0123456789abcdefABCDEF" for ch in hx):
                out.append(chr(int(hx, 16)))
                i += 4
            else:
                out.append("\\")
                i += 1
        else:
            out.append("\\")
            i += 1
    return "".join(out)


def one_line(s):
    return "".join(" " if is_control(c) else c for c in s)


# ---------------------------------------------------------------------------
# The island (src/discipline/flooding/rules/island.rs: Island).

MAX_FIELDS = 1000
MAX_ISLAND_TEXT = 16 * 1024
MAX_LEVEL = 7
FLOOD_CARDS = 10
RAISING_CARDS = 2
COMMANDS_PER_ROUND = 3
DEFAULT_MAX_ROUNDS = 2000
#: The wall clock the bot may be waited for in all in a game, in seconds
#: (--match-secs): the server's default, the start-up's 10 s and twice
#: 0.1 s for each round of the longest game (2000 rounds).
DEFAULT_MATCH_SECS = 410
DRY, FLOODED, SUNK = "#", "o", "."
QUOTE_CHARS = 60


class IslandError(Exception):
    pass


def quote_found(line):
    s = line[:QUOTE_CHARS]
    if len(line) > QUOTE_CHARS:
        s += "\u2026"
    return s


def parse_pair(s):
    if s.count(",") < 1:
        return None
    a, b = s.split(",", 1)

    def num(t):
        if not t or len(t) > 5 or not all(c in "0123456789" for c in t):
            return None
        return int(t)

    x, y = num(a), num(b)
    if x is None or y is None:
        return None
    return x, y


class Island:
    def __init__(self, width, height, tiles, start=None):
        fields = width * height
        if width == 0 or height == 0 or fields > MAX_FIELDS:
            raise IslandError(
                "line 1: the island is %d\u00d7%d = %d fields; it must have at least one "
                "and at most %d fields (columns \u00d7 rows, water included)"
                % (width, height, fields, MAX_FIELDS))
        default = None
        for want in (DRY, FLOODED):
            if want in tiles:
                i = tiles.index(want)
                default = (i % width + 1, i // width + 1)
                break
        if default is None:
            raise IslandError("the island has no land: at least one field must be dry "
                              "(`#`) or flooded (`o`)")
        if start is None:
            start = default
        else:
            x, y = start
            if x == 0 or y == 0 or x > width or y > height:
                raise IslandError(
                    "the start field `ROUND 1 %d,%d` is not on the %d\u00d7%d board (fields "
                    "run from 1,1 top left to %d,%d)" % (x, y, width, height, width, height))
            if tiles[(y - 1) * width + (x - 1)] == SUNK:
                raise IslandError(
                    "the start field `ROUND 1 %d,%d` is water; the bot must start on a dry "
                    "(`#`) or flooded (`o`) field" % (x, y))
        self.width = width
        self.height = height
        self.tiles = list(tiles)
        self.start = start

    @staticmethod
    def parse(text):
        """Parses and checks an island in the contest's text format."""
        if len(text.encode("utf-8")) > MAX_ISLAND_TEXT:
            raise IslandError(
                "the island text is %d bytes long; at most %d are read (an island has at "
                "most %d fields)" % (len(text.encode("utf-8")), MAX_ISLAND_TEXT, MAX_FIELDS))
        if text.startswith("\ufeff"):
            text = text[1:]
        lines = [(i + 1, rust_trim(l)) for i, l in enumerate(text.split("\n"))]
        pos = [0]

        def next_nonblank():
            while pos[0] < len(lines):
                item = lines[pos[0]]
                pos[0] += 1
                if item[1]:
                    return item
            return None

        got = next_nonblank()
        if got is None:
            raise IslandError("the island text is empty; it starts with a line "
                              "`GAMEBOARDSTART X,Y`")
        line_no, header = got

        def bad_header():
            return IslandError(
                "line %d: expected `GAMEBOARDSTART X,Y` (X columns, Y rows, e.g. "
                "`GAMEBOARDSTART 8,1`), found %s" % (line_no, debug_str(quote_found(header))))

        if not header.startswith("GAMEBOARDSTART "):
            raise bad_header()
        size = parse_pair(rust_trim(header[len("GAMEBOARDSTART "):]))
        if size is None:
            raise bad_header()
        w, h = size
        fields = w * h
        if w == 0 or h == 0 or fields > MAX_FIELDS:
            raise IslandError(
                "line %d: the island is %d\u00d7%d = %d fields; it must have at least one "
                "and at most %d fields (columns \u00d7 rows, water included)"
                % (line_no, w, h, fields, MAX_FIELDS))
        tiles = []
        for row in range(1, h + 1):
            got = next_nonblank()
            if got is None or got[1] == "GAMEBOARDEND":
                raise IslandError("the text ends after %d of the %d rows the header "
                                  "announces" % (row - 1, h))
            line, rtext = got
            n = 0
            for column, c in enumerate(rtext):
                if column >= w:
                    raise IslandError(
                        "line %d: row %d has %d symbols, but the header says every row "
                        "has %d" % (line, row, len(rtext), w))
                if c not in (DRY, FLOODED, SUNK):
                    raise IslandError(
                        "line %d, column %d: %s is not a field; use `#` (dry), `o` "
                        "(flooded) or `.` (water)" % (line, column + 1, debug_char(c)))
                tiles.append(c)
                n += 1
            if n != w:
                raise IslandError(
                    "line %d: row %d has %d symbols, but the header says every row has %d"
                    % (line, row, n, w))
        got = next_nonblank()
        if got is None:
            raise IslandError("the text ends before `GAMEBOARDEND` (after the %d rows)" % h)
        if got[1] != "GAMEBOARDEND":
            raise IslandError("line %d: expected `GAMEBOARDEND` after the %d rows, found %s"
                              % (got[0], h, debug_str(quote_found(got[1]))))
        start = None
        got = next_nonblank()
        if got is not None:
            line, stext = got

            def bad():
                return IslandError(
                    "line %d: after `GAMEBOARDEND` only an optional start line "
                    "`ROUND 1 X,Y` may follow, found %s" % (line, debug_str(quote_found(stext))))

            if not stext.startswith("ROUND 1 "):
                raise bad()
            pair = parse_pair(rust_trim(stext[len("ROUND 1 "):]))
            if pair is None:
                raise bad()
            x, y = pair
            if x == 0 or y == 0 or x > w or y > h:
                raise IslandError(
                    "the start field `ROUND 1 %d,%d` is not on the %d\u00d7%d board (fields "
                    "run from 1,1 top left to %d,%d)" % (x, y, w, h, w, h))
            start = (x, y)
            got = next_nonblank()
            if got is not None:
                raise IslandError("line %d: nothing may follow the start line, found %s"
                                  % (got[0], debug_str(quote_found(got[1]))))
        return Island(w, h, tiles, start)

    def rows(self):
        w = self.width
        return ["".join(self.tiles[i:i + w]) for i in range(0, len(self.tiles), w)]

    def to_text(self):
        """The island in its text format, always with the start line."""
        s = "GAMEBOARDSTART %d,%d\n" % (self.width, self.height)
        for row in self.rows():
            s += row + "\n"
        s += "GAMEBOARDEND\nROUND 1 %d,%d\n" % self.start
        return s


# ---------------------------------------------------------------------------
# The game (src/discipline/flooding/rules.rs: FloodGame), a pure state machine.

class Violation:
    def __init__(self, seat, rule, line):
        self.seat = seat
        self.rule = rule
        self.line = line


DIRECTIONS = {
    "NORTH": (0, -1),
    "EAST": (1, 0),
    "SOUTH": (0, 1),
    "WEST": (-1, 0),
    "CURRENT": (0, 0),
}


def parse_command(line):
    """`GO d` / `DRY d` as the seed writes it; blanks around and between
    the words and CRs at the end are tolerated (the server splits on ASCII
    white space). None if the line is not a command."""
    # The separators of Rust's split_ascii_whitespace, no other.
    words = [w for w in re.split("[ \t\n\x0c\r]+", line) if w]
    if len(words) != 2:
        return None
    verb, d = words
    if d not in DIRECTIONS or verb not in ("GO", "DRY"):
        return None
    return verb, DIRECTIONS[d]


def field_text(f):
    return "%d,%d" % f


class FloodGame:
    def __init__(self, island, max_rounds, seed):
        self.width = island.width
        self.height = island.height
        self.tiles = list(island.tiles)
        self.position = island.start
        self.max_rounds = max_rounds
        self.card_rng = SplitMix64(derive(seed, [1]))
        self.field_rng = SplitMix64(derive(seed, [2]))
        land = [i for i, t in enumerate(self.tiles) if t != SUNK]
        self.field_rng.shuffle(land)
        self.draw_pile = land  # top = last
        self.discard = []
        self.cards = []  # top = last; True raises the level
        self.level = 0
        self.round = 0
        self.commands = 0
        self.walked_into = None
        self.outbox = []
        self.n_warnings = 0
        self.outcome = None
        self.outbox.append("GAMEBOARDSTART %d,%d" % (island.width, island.height))
        self.outbox.extend(island.rows())
        self.outbox.append("GAMEBOARDEND")
        self.begin_round()

    # -- the piles and the deck
    def draw_card(self):
        if not self.cards:
            self.cards = [i < RAISING_CARDS for i in range(FLOOD_CARDS)]
            self.card_rng.shuffle(self.cards)
        return self.cards.pop()

    def discard_on_top(self):
        self.field_rng.shuffle(self.discard)
        self.draw_pile.extend(self.discard)
        self.discard = []

    def draw_field(self):
        if not self.draw_pile:
            self.draw_pile, self.discard = self.discard, []
            self.field_rng.shuffle(self.draw_pile)
        return self.draw_pile.pop() if self.draw_pile else None

    # -- the board
    def index(self, f):
        x, y = f
        if 1 <= x <= self.width and 1 <= y <= self.height:
            return (y - 1) * self.width + (x - 1)
        return None

    def tile(self, f):
        i = self.index(f)
        return SUNK if i is None else self.tiles[i]

    def field_at(self, i):
        return (i % self.width + 1, i // self.width + 1)

    # -- the rounds
    def begin_round(self):
        self.round += 1
        self.commands = 0
        self.outbox.append("ROUND %d %s" % (self.round, field_text(self.position)))

    def finish(self, rounds, end):
        self.outcome = {
            "rounds": rounds,
            "end": end,
            "level": self.level,
            "position": self.position,
            "n_warnings": self.n_warnings,
        }

    def forfeit(self, seat, reason):
        if self.outcome is None:
            self.outbox = []
            self.finish(max(self.round - 1, 0), "the game was stopped: %s" % reason)

    def apply(self, command):
        if self.walked_into is not None:
            return  # drowned: the rest of the round's commands are not carried out
        verb, (dx, dy) = command
        to = (self.position[0] + dx, self.position[1] + dy)
        if verb == "GO":
            self.position = to
            if self.tile(to) == SUNK:
                self.walked_into = to
        else:
            i = self.index(to)
            if i is not None and self.tiles[i] == FLOODED:
                self.tiles[i] = DRY
            elif i is not None and self.tiles[i] == DRY:
                pass
            else:
                self.n_warnings += 1

    def end_round(self):
        raising = self.draw_card()
        rise = 1 if (raising and self.level < MAX_LEVEL) else 0
        if rise:
            self.level += 1
            self.discard_on_top()
        self.outbox.append("INCRFLOOD %d" % rise)
        for _ in range(self.level):
            i = self.draw_field()
            if i is None:
                break  # every field has sunk
            if self.tiles[i] == DRY:
                self.tiles[i] = FLOODED
                self.discard.append(i)
            else:
                self.tiles[i] = SUNK
            self.outbox.append("FLOOD " + field_text(self.field_at(i)))
        if self.walked_into is not None:
            self.finish(self.round, "the bot walked into the water at %s"
                        % field_text(self.walked_into))
        elif self.tile(self.position) == SUNK:
            self.finish(self.round, "the field %s sank under the bot" % field_text(self.position))
        elif self.round >= self.max_rounds:
            self.finish(self.round, "the bot was still on the island after the last round")
        else:
            self.begin_round()

    # -- the LineGame interface
    def next(self):
        if self.outbox:
            lines, self.outbox = self.outbox, []
            return ("send", 0, lines)
        if self.outcome is not None:
            return ("over", [(0, ["END"])])
        return ("expect", 0)

    def reply(self, seat, line):
        if seat != 0 or self.outcome is not None:
            return Violation(seat, "no line was expected from the bot now", line)
        command = parse_command(line)
        if command is None:
            rule = ("after `ROUND %d %s` the bot must print exactly three commands, one a "
                    "line, each `GO` or `DRY` followed by one space and `NORTH`, `EAST`, "
                    "`SOUTH`, `WEST` or `CURRENT`, in capitals (command %d of round %d was "
                    "not one)" % (self.round, field_text(self.position), self.commands + 1,
                                  self.round))
            self.outbox = []
            self.finish(self.round - 1, "the bot broke a rule: %s" % rule)
            return Violation(seat, rule, line)
        self.commands += 1
        self.apply(command)
        if self.commands == COMMANDS_PER_ROUND:
            self.end_round()
        return None

    def turn(self):
        return self.round

    def summary(self, names):
        o = self.outcome
        t = []
        if o is None:
            t.append("no outcome")
        else:
            t.append("%s: survived %s (%s), flood level %d, at %s"
                     % (names[0], counted(o["rounds"], "round", "rounds"), o["end"], o["level"],
                        field_text(o["position"])))
            if o["n_warnings"]:
                t.append("%s: tried to dry water %d times" % (names[0], o["n_warnings"]))
        return t


# ---------------------------------------------------------------------------
# The transcript (src/game/lines.rs: Recorded).

TRANSCRIPT_CAP = 200000



#: The most bytes of one line a transcript keeps (the server's
#: game::lines::STORED_LINE_BYTES).
STORED_LINE_BYTES = 256


def stored_line(line):
    """A line as a transcript keeps it: at most STORED_LINE_BYTES of it,
    with a note of how much was left out (the server's stored_line)."""
    raw = line.encode("utf-8")
    if len(raw) <= STORED_LINE_BYTES:
        return line
    end = STORED_LINE_BYTES
    while end > 0 and (raw[end] & 0xC0) == 0x80:
        end -= 1
    return raw[:end].decode("utf-8") + "[... %d more bytes]" % (len(raw) - end)


def kept_line(line, violation):
    """What the transcript keeps of a line a seat printed: an accepted
    line as the rules read it (blanks around it and a CR at the end do not
    count), any line cut at STORED_LINE_BYTES (the server's Recorded)."""
    return stored_line(line if violation is not None else line.strip(" \t\r"))


class Recorded:
    def __init__(self, game, cap=TRANSCRIPT_CAP):
        self.game = game
        self.transcript = []  # (seat, "to"|"from", line)
        self.truncated = False
        self.cap = cap
        self.farewell_noted = False

    def note(self, seat, said, line):
        if len(self.transcript) < self.cap:
            self.transcript.append((seat, said, line))
        else:
            self.truncated = True

    def next(self):
        step = self.game.next()
        if step[0] == "send":
            for l in step[2]:
                self.note(step[1], "to", l)
        elif step[0] == "over" and not self.farewell_noted:
            self.farewell_noted = True
            for seat, lines in step[1]:
                for l in lines:
                    self.note(seat, "to", l)
        return step

    def reply(self, seat, line):
        violation = self.game.reply(seat, line)
        self.note(seat, "from", kept_line(line, violation))
        return violation


# ---------------------------------------------------------------------------
# Bots as processes (src/lines/mod.rs: Match, without CPU and memory limits).

MAX_LINE = 4096


class Failure(Exception):
    """A seat failed: a rule (`rule` set) or outside the rules."""

    def __init__(self, seat, turn, what, line=None, rule=False):
        Exception.__init__(self, what)
        self.seat = seat
        self.turn = turn
        self.rule = rule
        reason = "player %d, turn %d: %s" % (seat + 1, turn, what)
        if line is not None:
            reason += '; its line: "%s"' % show_line(line)
        self.reason = reason


def signal_name(sig):
    names = {
        signal.SIGSEGV: "segmentation fault, SIGSEGV",
        signal.SIGABRT: "aborted, SIGABRT",
        signal.SIGFPE: "arithmetic error, SIGFPE",
        signal.SIGILL: "illegal instruction, SIGILL",
        signal.SIGBUS: "bus error, SIGBUS",
        signal.SIGKILL: "killed, SIGKILL",
        signal.SIGTERM: "terminated, SIGTERM",
        signal.SIGPIPE: "broken pipe, SIGPIPE",
    }
    return names.get(sig, "signal %d" % sig)


#: The failure of a line printed when none was asked for (the server's
#: words). A bot is looked at before it is sent new lines after its answer.
UNASKED = ("printed a line nobody asked for (after its answer, before the referee's "
           "next lines): print exactly the lines the protocol asks for, one answer "
           "per request")

#: The failure of a bot the referee waited for longer in all than a match
#: allows (--match-secs; the server's words, with the seconds for %s).
WAITED = ("was waited for more than %s s of wall clock in all in this match (its "
          "start-up and its answers together; each bot has that much per match): a "
          "bot that sleeps or blocks instead of answering is stopped there")

#: System call numbers for at_rest: (reads of standard input, other waits
#: for input, sleeps), per machine.
SYSCALLS = {
    "x86_64": ((0, 17, 19), (7, 23, 270, 271), (35, 230)),
    "aarch64": ((63, 67, 65), (72, 73), (101, 115)),
}


def at_rest(pid):
    """Whether the bot `pid` has come to rest, as the server looks before
    it sends new lines after an answer: a thread of it waits for input
    (reads its standard input, or sits in poll or select), or every thread
    is blocked in a system call other than a sleep. Then whatever it printed
    before is in its output pipe. Only where /proc shows it (Linux on
    x86-64 or aarch64); elsewhere at once, so a line printed late is read
    as the next answer there."""
    import platform
    table = SYSCALLS.get(platform.machine())
    base = "/proc/%d/task" % pid
    try:
        tids = os.listdir(base) if table else None
    except OSError:
        tids = None
    if tids is None:
        return True
    reads, waits, sleeps = table
    all_blocked = True
    for tid in tids:
        try:
            with open("%s/%s/syscall" % (base, tid)) as f:
                words = f.read().split()
        except OSError:
            continue
        try:
            nr = int(words[0])
        except (ValueError, IndexError):
            all_blocked = False  # "running"
            continue
        if (nr in reads and words[1:2] == ["0x0"]) or nr in waits:
            return True
        if nr == -1 or nr in sleeps:
            all_blocked = False
    return all_blocked


class Bot:
    def __init__(self, seat, command):
        self.seat = seat
        argv = shlex.split(command)
        if not argv:
            raise OSError("an empty command")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     bufsize=0, start_new_session=True)
        self.pid = self.proc.pid
        self.stdin = self.proc.stdin.fileno()
        self.stdout = self.proc.stdout.fileno()
        os.set_blocking(self.stdin, False)
        os.set_blocking(self.stdout, False)
        self.buf = bytearray()
        self.eof = False
        self.status = None
        self.rusage = None
        self.turn = 0
        self.dead = False
        self.answered = False
        self.settled = False
        self.reply_secs = 10.0
        self.match_secs = float(DEFAULT_MATCH_SECS)
        # The wall clock this bot has been waited for in this game, in
        # seconds: from the moment its line is asked for until it is
        # complete (start-up and answers; not the settling after one).
        self.waited = 0.0

    # -- process state
    def try_status(self):
        if self.status is None:
            try:
                pid, st, ru = os.wait4(self.pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if pid:
                self.status, self.rusage = st, ru
                self.proc.returncode = os.waitstatus_to_exitcode(st)
        return self.status

    def kill(self):
        if not self.dead:
            self.dead = True
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
        if self.status is None:
            try:
                _, st, ru = os.wait4(self.pid, 0)
                self.status, self.rusage = st, ru
                self.proc.returncode = os.waitstatus_to_exitcode(st)
            except ChildProcessError:
                pass
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass

    def cpu_ms(self):
        if self.rusage is None:
            return 0
        return int((self.rusage.ru_utime + self.rusage.ru_stime) * 1000)

    def ended(self):
        """The failure of a bot whose output closed or whose input broke."""
        deadline = time.monotonic() + 1.0
        while self.try_status() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        st = self.status
        self.kill()
        if st is None:
            return "closed its standard output before the game was over"
        if os.WIFSIGNALED(st):
            return "crashed (%s)" % signal_name(os.WTERMSIG(st))
        code = os.WEXITSTATUS(st)
        return "ended before the game was over (exit status %d)" % code

    # -- lines
    def send(self, line):
        self.settle()
        self.write(line)

    def settle(self):
        """Before new lines after an answer: the bot may have printed
        nothing since (the server's Match::settle). Waits until it has come
        to rest (at most --reply-secs)."""
        if not self.answered or self.settled or self.eof or self.dead:
            return
        deadline = time.monotonic() + self.reply_secs
        while True:
            rest = at_rest(self.pid)
            line = self.take_line()
            if line is not None:
                self.kill()
                raise Failure(self.seat, self.turn, UNASKED, line)
            if rest or self.eof or time.monotonic() >= deadline:
                break
            time.sleep(0.0002)
        self.settled = True

    def write(self, line):
        if self.dead:
            raise Failure(self.seat, self.turn, "was ended before the game was over")
        msg = (line + "\n").encode("utf-8")
        done = 0
        deadline = None
        while done < len(msg):
            try:
                done += os.write(self.stdin, msg[done:])
                continue
            except BlockingIOError:
                now = time.monotonic()
                if deadline is None:
                    deadline = now + self.reply_secs
                if now >= deadline:
                    self.kill()
                    raise Failure(self.seat, self.turn, "stopped reading the referee's lines")
                select.select([], [self.stdin], [], min(deadline - now, 0.1))
            except (BrokenPipeError, ConnectionResetError):
                raise Failure(self.seat, self.turn, self.ended())
            except OSError:
                raise Failure(self.seat, self.turn, self.ended())

    def take_line(self):
        """A complete line from the buffer, reading what is there first;
        None when there is none yet (or the output closed)."""
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                raw = bytes(self.buf[:i])
                del self.buf[:i + 1]
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                if len(raw) > MAX_LINE:
                    shown = raw[:400].decode("utf-8", "replace")
                    self.kill()
                    raise Failure(self.seat, self.turn,
                                  "sent a line longer than %d bytes" % MAX_LINE, shown)
                try:
                    return raw.decode("utf-8")
                except UnicodeDecodeError:
                    self.kill()
                    raise Failure(self.seat, self.turn, "sent a line that is not UTF-8 text",
                                  raw.decode("utf-8", "replace"))
            if len(self.buf) > MAX_LINE:
                shown = bytes(self.buf[:400]).decode("utf-8", "replace")
                self.kill()
                raise Failure(self.seat, self.turn,
                              "sent a line longer than %d bytes" % MAX_LINE, shown)
            if self.eof:
                return None
            try:
                chunk = os.read(self.stdout, 4096)
            except BlockingIOError:
                return None
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
                return None
            self.buf.extend(chunk)

    def receive(self):
        since = time.monotonic()
        deadline = since + self.reply_secs
        # Where this bot's waiting in all would pass --match-secs (the
        # server's LineLimits::waited).
        out = since + max(0.0, self.match_secs - self.waited)
        while True:
            line = self.take_line()
            if line is not None:
                self.waited += time.monotonic() - since
                self.answered = True
                self.settled = False
                return line
            if self.eof:
                raise Failure(self.seat, self.turn, self.ended())
            now = time.monotonic()
            if now >= out:
                self.kill()
                raise Failure(self.seat, self.turn,
                              WAITED % secs(int(round(self.match_secs * 1000))))
            if now >= deadline:
                partial = bytes(self.buf).decode("utf-8", "replace") if self.buf else None
                self.kill()
                raise Failure(
                    self.seat, self.turn,
                    "gave no answer within %s s of wall clock (is it blocked, sleeping or "
                    "waiting for input? Flush standard output after every line: C: "
                    "fflush(stdout); Python: print(..., flush=True))"
                    % secs(int(self.reply_secs * 1000)), partial)
            select.select([self.stdout], [], [], min(min(deadline, out) - now, 1.0))


def default_name(command):
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if not words:
        return "bot"
    base = os.path.basename(words[-1]) or words[-1]
    stem = base.rsplit(".", 1)[0] if "." in base[1:] else base
    return stem or "bot"


# ---------------------------------------------------------------------------
# Driving the game (src/lines/game.rs: drive, play_game_on).

def drive(rec, bots):
    """Plays the recorded game with the bots until it is over or a seat
    failed; returns the failures."""
    game = rec.game
    turn = 0
    try:
        while True:
            step = rec.next()
            if step[0] == "send":
                for line in step[2]:
                    bots[step[1]].send(line)
            elif step[0] == "expect":
                seat = step[1]
                turn = game.turn()
                for b in bots:
                    b.turn = turn
                line = bots[seat].receive()
                v = rec.reply(seat, line)
                if v is not None:
                    f = Failure(v.seat, turn, "broke a rule: " + v.rule, line, rule=True)
                    nxt = rec.next()
                    if nxt[0] == "over":
                        farewell(bots, nxt[1])
                    return [f]
            else:
                farewell(bots, step[1])
                return []
    except Failure as f:
        return [f]


def farewell(bots, lines_per_seat):
    for seat, lines in lines_per_seat:
        for line in lines:
            try:
                bots[seat].write(line)
            except Failure:
                pass


def replay(rec, moves, forfeits):
    """The full transcript of a game from its moves (transcript.rs: replay)."""
    game = rec.game
    it = iter(moves)
    failures = []
    problem = None
    budget = 4 * TRANSCRIPT_CAP
    while budget > 0:
        budget -= 1
        step = rec.next()
        if step[0] == "send":
            continue
        if step[0] == "over":
            break
        seat = step[1]
        m = next(it, None)
        if m is None:
            if not forfeits:
                problem = "the moves ran out before the game was over"
            for s, reason in forfeits:
                game.forfeit(s, reason)
                failures.append((s, reason))
            break
        if m[0] != seat:
            problem = "a move of player %d where player %d was asked: the moves are " \
                      "damaged; stopped there" % (m[0] + 1, seat + 1)
            break
        turn = game.turn()
        v = rec.reply(seat, m[1])
        if v is not None:
            f = Failure(v.seat, turn, "broke a rule: " + v.rule, m[1], rule=True)
            failures.append((v.seat, f.reason))
            rec.next()
            break
    if problem is None and next(it, None) is not None:
        problem = "moves are left over after the game was over"
    return failures, problem


# ---------------------------------------------------------------------------
# The two text forms.

def header(magic, params, names, game=None):
    t = magic + DISCIPLINE + "\n"
    if game is not None:
        t += "# game: " + one_line(game) + "\n"
    for p in params:
        t += "# " + p + "\n"
    for i, n in enumerate(names):
        t += "# player %d: %s\n" % (i + 1, one_line(n))
    return t


def full_text(params, names, transcript, failures, results, game=None):
    t = header(FULL_MAGIC, params, names, game)
    for seat, said, line in transcript:
        t += "%s %d: %s\n" % (said, seat + 1, quote(line))
    for seat, reason in failures:
        t += "# failure: player %d: %s\n" % (seat + 1, one_line(reason))
    for r in results:
        t += "# result: %s\n" % one_line(r)
    return t


def moves_text(params, names, transcript, forfeits):
    t = header(MOVES_MAGIC, params, names)
    for seat, said, line in transcript:
        if said == "from":
            t += "%d: %s\n" % (seat + 1, quote(line))
    for seat, reason in forfeits:
        t += "! %d: %s\n" % (seat + 1, one_line(reason))
    if forfeits:
        # Where the game stopped: a failure noticed at a write to a bot
        # that quit is not told by the rules.
        t += "= %d\n" % len(transcript)
    return t


class UsageError(Exception):
    pass


def split_games(text):
    """The games of a moves text, each from its first line: a mailed file
    holds one game after the other."""
    games = []
    for raw in text.split("\n"):
        if raw.startswith(MOVES_MAGIC) or raw.startswith(MOVES_MAGIC_1) or not games:
            games.append([])
        games[-1].append(raw)
    return ["\n".join(g) for g in games]


def parse_moves(text):
    """(header lines, names, moves [(seat, line)], forfeits [(seat, reason)],
    ends_after): ends_after is the N of a last line `= N` (how many lines
    the transcript had), else None. Players are numbered from 1 (format
    2); a text of format 1 (first line `# KNOBELN moves 1: `) numbers them
    from 0. The seats returned count from 0."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [l[:-1] if l.endswith("\r") else l for l in lines]
    if not lines or lines[0] not in (MOVES_MAGIC + DISCIPLINE, MOVES_MAGIC_1 + DISCIPLINE):
        raise UsageError("not a moves form of %s: its first line must be `%s%s`"
                         % (DISCIPLINE, MOVES_MAGIC, DISCIPLINE))
    lowest = 1 if lines[0].startswith(MOVES_MAGIC) else 0
    word = "player" if lowest else "seat"
    head = []
    names = {}
    moves = []
    forfeits = []
    ends_after = None
    for no, raw in enumerate(lines, 1):
        if raw.startswith("#"):
            if not moves and not forfeits and ends_after is None:
                head.append(raw)
                if raw.startswith("# %s " % word):
                    k, _, name = raw[len(word) + 3:].partition(": ")
                    if k.isdigit() and int(k) >= lowest:
                        names[int(k) - lowest] = name
            continue
        if raw == "":
            continue
        if ends_after is not None:
            raise UsageError("line %d: nothing follows `= N`" % no)
        if raw.startswith("= "):
            n = raw[2:]
            if not n.isdigit() or not n.isascii():
                raise UsageError("line %d: `= N`: a number of lines" % no)
            ends_after = int(n)
            continue
        forfeit = raw.startswith("! ")
        rest = raw[2:] if forfeit else raw
        if ": " in rest:
            seat, line = rest.split(": ", 1)
        elif rest.endswith(":"):
            seat, line = rest[:-1], ""
        else:
            raise UsageError("line %d: expected `%s: LINE`" % (no, word.upper()))
        if not seat.isdigit() or not seat.isascii():
            raise UsageError("line %d: a %s number first" % (no, word))
        seat = int(seat)
        highest = N_SEATS + lowest - 1
        if not lowest <= seat <= highest:
            raise UsageError("line %d: %s %d, but the %ss are %d to %d"
                             % (no, word, seat, word, lowest, highest))
        seat -= lowest
        if forfeit:
            forfeits.append((seat, line))
        else:
            if forfeits:
                raise UsageError("line %d: a move after a failure" % no)
            moves.append((seat, unquote(line)))
    seat_names = [names.get(i, "player %d" % (i + 1)) for i in range(N_SEATS)]
    return head, seat_names, moves, forfeits, ends_after


def write_out(path, text):
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8")


# ---------------------------------------------------------------------------
# The flooding island's setup.

def params_lines(seed, max_rounds, island_name, island):
    v = ["seed: %d" % seed, "max_rounds: %d" % max_rounds, "island: %s" % one_line(island_name)]
    for l in island.to_text().split("\n")[:-1]:
        v.append("island-text: " + l)
    return v


def setup_of_header(head):
    seed = None
    max_rounds = DEFAULT_MAX_ROUNDS
    island_name = "island"
    rows = []
    for l in head:
        if l.startswith("# seed: "):
            seed = l[len("# seed: "):].strip()
        elif l.startswith("# max_rounds: "):
            max_rounds = l[len("# max_rounds: "):].strip()
        elif l.startswith("# island: "):
            island_name = l[len("# island: "):]
        elif l.startswith("# island-text: "):
            rows.append(l[len("# island-text: "):])
    try:
        seed = int(seed)
        max_rounds = int(max_rounds)
        if not (0 <= seed <= MASK) or max_rounds < 1:
            raise ValueError
    except (TypeError, ValueError):
        raise UsageError("the moves' header needs `# seed: N` (0 to 2^64-1) and a valid "
                         "`# max_rounds: N`")
    if not rows:
        raise UsageError("the moves' header has no `# island-text:` lines")
    try:
        island = Island.parse("\n".join(rows) + "\n")
    except IslandError as e:
        raise UsageError("the island of the moves' header: %s" % e)
    return seed, max_rounds, island_name, island


def new_game(setup):
    seed, max_rounds, _, island = setup
    return FloodGame(island, max_rounds, seed)


# ---------------------------------------------------------------------------
# Command line.

def positive_int(s):
    v = int(s)
    if v < 0:
        raise ValueError(s)
    return v


def build_parser():
    p = argparse.ArgumentParser(
        prog="referee.py",
        description="The flooding island's home referee: plays one game with your bot "
                    "exactly as the contest server does (see the top of this file).")
    p.add_argument("--island", metavar="FILE", help="the island file")
    p.add_argument("--seed", type=positive_int, default=1, help="the game's seed (default 1)")
    p.add_argument("--max-rounds", type=positive_int, default=DEFAULT_MAX_ROUNDS,
                   help="the round cap (default %d)" % DEFAULT_MAX_ROUNDS)
    p.add_argument("--transcript", metavar="FILE",
                   help="write the full transcript there (default: standard output)")
    p.add_argument("--moves", metavar="FILE", help="also write the moves form there")
    p.add_argument("--reply-secs", type=float, default=10.0,
                   help="wall-clock seconds per line of the bot (default 10)")
    p.add_argument("--match-secs", type=float, default=float(DEFAULT_MATCH_SECS),
                   help="wall-clock seconds the bot may be waited for in all in the game, "
                        "its start-up and its lines together (default %d, the "
                        "server's)" % DEFAULT_MATCH_SECS)
    p.add_argument("--name0", metavar="NAME", help="the bot's name in the header")
    p.add_argument("--expand", metavar="MOVES_FILE",
                   help="write the full transcript of a moves form instead of playing")
    p.add_argument("bots", nargs="*", metavar="'BOT COMMAND'")
    return p


def main(argv=None):
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    try:
        if args.expand is not None:
            return expand_main(args)
        return play_main(args, parser)
    except UsageError as e:
        print("referee.py: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("referee.py: interrupted; the bots were ended", file=sys.stderr)
        return 130


def expand_main(args):
    if args.bots:
        raise UsageError("--expand runs no bot; give no bot command")
    try:
        text = read_text(args.expand)
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError("cannot read %s: %s" % (args.expand, e))
    # A mailed file holds one game after the other: each is expanded, the
    # full transcripts follow each other in the same order.
    games = split_games(text)
    fulls = []
    moves_out = []
    for k, one in enumerate(games, 1):
        try:
            head, names, moves, forfeits, ends_after = parse_moves(one)
        except UsageError as e:
            if len(games) == 1:
                raise
            raise UsageError("game %d: %s" % (k, e))
        setup = setup_of_header(head)
        name = next((h[len("# game: "):] for h in head if h.startswith("# game: ")), None)
        game = new_game(setup)
        rec = Recorded(game)
        failures, problem = replay(rec, moves, forfeits)
        if ends_after is not None:
            # Where the game stopped: the bot that quit was noticed there.
            del rec.transcript[ends_after:]
        results = game.summary(names)
        params = params_lines(*setup)
        fulls.append(full_text(params, names, rec.transcript, failures, results, name))
        moves_out.append(moves_text(params, names, rec.transcript, forfeits))
        if len(games) > 1:
            print("game %d of %d%s:" % (k, len(games), ", " + name if name else ""),
                  file=sys.stderr)
        for r in results:
            print(r, file=sys.stderr)
        if problem:
            print("referee.py: note: %s" % problem, file=sys.stderr)
    write_out(args.transcript, "".join(fulls))
    if args.moves:
        write_out(args.moves, "".join(moves_out))
    return 0


def play_main(args, parser):
    if len(args.bots) != N_SEATS:
        raise UsageError("the flooding island is played by one bot: give one bot command "
                         "(e.g. ./mybot or 'python3 mybot.py'); see --help")
    if args.island is None:
        raise UsageError("give the island with --island FILE")
    if not (0 <= args.seed <= MASK):
        raise UsageError("--seed must be in 0..2^64-1")
    if not args.reply_secs > 0:
        raise UsageError("--reply-secs must be positive")
    if not args.match_secs > 0:
        raise UsageError("--match-secs must be positive")
    try:
        island_text = read_text(args.island)
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError("cannot read the island %s: %s" % (args.island, e))
    try:
        island = Island.parse(island_text)
    except IslandError as e:
        raise UsageError("the island: %s" % e)
    island_name = os.path.splitext(os.path.basename(args.island))[0] or "island"
    setup = (args.seed, max(args.max_rounds, 1), island_name, island)
    names = [args.name0 or default_name(args.bots[0])]
    game = new_game(setup)
    rec = Recorded(game)
    started = time.monotonic()
    bots = []
    try:
        for seat, command in enumerate(args.bots):
            try:
                b = Bot(seat, command)
            except (OSError, ValueError) as e:
                raise UsageError("cannot start the bot %r: %s" % (command, e))
            b.reply_secs = args.reply_secs
            b.match_secs = args.match_secs
            bots.append(b)
        failures = drive(rec, bots)
        for f in failures:
            game.forfeit(f.seat, f.reason)
    finally:
        for b in bots:
            b.kill()
    wall_ms = int((time.monotonic() - started) * 1000)
    print("game seed %d:" % setup[0], file=sys.stderr)
    results = game.summary(names)
    params = params_lines(*setup)
    fails = [(f.seat, f.reason) for f in failures]
    forfeits = [(f.seat, f.reason) for f in failures if not f.rule]
    write_out(args.transcript, full_text(params, names, rec.transcript, fails, results))
    if args.moves:
        write_out(args.moves, moves_text(params, names, rec.transcript, forfeits))
    for r in results:
        print(r, file=sys.stderr)
    for i, b in enumerate(bots):
        print("%s: %d ms CPU" % (names[i], b.cpu_ms()), file=sys.stderr)
    print("wall clock: %d ms" % wall_ms, file=sys.stderr)
    for f in failures:
        print("FAILURE of %s: %s" % (names[f.seat], f.reason), file=sys.stderr)
    if rec.truncated:
        print("note: the transcript was cut after %d lines, as the server cuts it"
              % TRANSCRIPT_CAP, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
