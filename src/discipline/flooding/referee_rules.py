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
    --reply-secs S      wall-clock seconds the bot has for each line, and
                        to come back to its input after it (default 10)
    --match-secs S      wall-clock seconds the bot may be waited for in
                        all in the game, its start-up, its lines and
                        its returns to its input together (default 410,
                        the server's)
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
--match-secs for the bot in all in the game, its start-up, its lines
and its returns to its input together (default 410 s, the server's: the start-up's 10 s and twice
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
# Text helpers of the island's messages (the driver has the rest).

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
# Command line: what the driver (game_driver.py) asks of the flooding island.

PARSER_DESCRIPTION = ("The flooding island's home referee: plays one game with your bot "
                      "exactly as the contest server does (see the top of this file).")
#: Who the limits' options speak of.
THE_BOT = "the bot"


def positive_int(s):
    v = int(s)
    if v < 0:
        raise ValueError(s)
    return v


def add_game_options(p):
    p.add_argument("--island", metavar="FILE", help="the island file")
    p.add_argument("--seed", type=positive_int, default=1, help="the game's seed (default 1)")
    p.add_argument("--max-rounds", type=positive_int, default=DEFAULT_MAX_ROUNDS,
                   help="the round cap (default %d)" % DEFAULT_MAX_ROUNDS)


def add_name_options(p):
    p.add_argument("--name0", metavar="NAME", help="the bot's name in the header")


def check_play_args(args):
    if len(args.bots) != N_SEATS:
        raise UsageError("the flooding island is played by one bot: give one bot command "
                         "(e.g. ./mybot or 'python3 mybot.py'); see --help")
    if args.island is None:
        raise UsageError("give the island with --island FILE")
    if not (0 <= args.seed <= MASK):
        raise UsageError("--seed must be in 0..2^64-1")


def play_setup(args):
    try:
        island_text = read_text(args.island)
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError("cannot read the island %s: %s" % (args.island, e))
    try:
        island = Island.parse(island_text)
    except IslandError as e:
        raise UsageError("the island: %s" % e)
    island_name = os.path.splitext(os.path.basename(args.island))[0] or "island"
    return (args.seed, max(args.max_rounds, 1), island_name, island)


def heading_lines(setup):
    return ["game seed %d:" % setup[0]]


