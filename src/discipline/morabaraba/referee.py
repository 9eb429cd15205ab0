#!/usr/bin/env python3
"""Morabaraba (Ohjelmointiputka 2014): a participant's home referee.

This one file (Python 3.9 or newer, standard library only) plays a game of
Morabaraba between two bots on your own machine exactly as the KNOBELN
contest server does: the same rules, the same protocol, the same lines in the
same order. For the same bot answers, the transcript it writes equals the
server's line for line (Morabaraba has no chance: there is no seed).

Running it
----------
A bot is a program that reads the referee's lines on its standard input and
prints its lines on its standard output (flush after every line!). Give each
bot's command line as one argument (split like a shell would split it, but
not run by a shell); the first bot is player 1 and begins:

    gcc -O2 -o mybot mybot.c
    python3 referee.py ./mybot 'python3 other.py'

    python3 referee.py 'python3 mybot.py' 'python3 mybot.py'

Options:
    --transcript FILE   write the full transcript there (default: stdout)
    --moves FILE        also write the compact moves form there
    --reply-secs S      wall-clock seconds a bot has for each line
                        (default 10)
    --match-secs S      wall-clock seconds a bot may be waited for in
                        all in the game, its start-up and its lines
                        together (default 370, the server's)
    --name0 NAME, --name1 NAME
                        the names of players 1 and 2 in the header (default: the file
                        name of each command, without extension)
    --expand FILE       read a moves form (e.g. from the contest's mail) and
                        write its full transcript; no bot is run

A short result goes to standard error. The bots' own standard error is
passed through to the terminal, so you can debug with it. Exit status 0:
the game was refereed (whatever the bots did); 2: a usage error (bad option,
a command that cannot be started, a moves file that cannot be read).

Limits: the server gives each bot 120 s of CPU time for the whole game and
512 MB of memory, and the CPU time counts in the scoring. This referee does
not measure CPU time or memory: it only has the wall clock. It waits at
most --reply-secs for each line, and, as the server, at most --match-secs
for each bot in all in the game, its start-up and its lines together
(default 370 s, the server's: the start-up's 130 s and twice the 120 s
of CPU time of a game). A bot that is fast enough here may still be too
slow on the server. Where the server decides by the clock (a bot that is
too slow, or ends while the referee writes to it), the point where the
failure is noticed can differ: e.g. player 1 that ends before it reads
its player number may fail before or after the referee sends `2` to
player 2, here as on the server. The lines the bots printed before are the
same. It runs on Linux and macOS (not on Windows: it uses process groups
and select on pipes).

The protocol, in short
----------------------
Each bot first gets its player number, `1` or `2`, and answers with its
name: 3 to 9 letters a-z, A-Z or digits. Then the player to move prints its
move as nine numbers separated by spaces, `from to shot`, each point `x y s`
(x 1 left .. 3 right, y 1 bottom .. 3 top, s 1 outer .. 3 inner square,
`2 2 s` does not exist; `0 0 0` for none): `0 0 0 2 3 1 0 0 0` places a cow
in the middle of the outer square's top side. The other bot gets the move,
written with single spaces. When the game is over, both get
`0 0 0 0 0 0 0 0 0` (and not the last move). A line that is not a legal
move loses at once. Twelve cows each; turns 1-24 place, later turns move
along a line (fly anywhere with three cows); a new mill shoots one
opponent's cow outside mills (any if all are in mills); a mill your previous
move broke while forming another may not be formed again on your very next
turn; two cows left loses; a draw when a player has three cows and ten turns
formed no mill, or after 200 turns without a mill; no legal move loses. All
of it is in the contest's rules; this file is the exact reference of the
line protocol.

The transcript (full form)
--------------------------
    # knobeln transcript 2: morabaraba
    # player 1: mybot
    # player 2: other
    to 1: 1
    to 2: 2
    from 1: mybot
    from 2: other
    from 1: 0 0 0 2 3 1 0 0 0
    to 2: 0 0 0 2 3 1 0 0 0
    ...
    to 1: 0 0 0 0 0 0 0 0 0
    to 2: 0 0 0 0 0 0 0 0 0
    # failure: player 2: ...               (only if a bot failed)
    # result: ...

`to P:` is a line the referee sent to player P (1 or 2), `from P:` a
line player P printed (after its line end and one CR were removed), in the
order the server notes them: after a line that breaks a rule that line,
then the nine zeros to both; after a failure outside the rules (a bot
ended, crashed, printed an overlong or non-UTF-8 line, gave no answer in
time) the game just stops there. Control characters in a line are written
as `\\xNN` and a backslash as `\\\\`, so every exchange stays one line.
Lines beginning with `#` are comments; only the `to` and `from` lines are
compared with the server.

The moves form (compact)
------------------------
    # knobeln moves 2: morabaraba
    # player 1: mybot
    # player 2: other
    1: mybot
    2: other
    1: 0 0 0 2 3 1 0 0 0
    ...
    ! 2: <reason>          (player 2 failed outside the rules here)
    = 123                  (after a `!` line: the transcript's lines)

Only what the bots printed; everything else follows from the rules.
`= N` says how many lines the transcript had: a bot that quit is noticed
where a write to it fails, which the rules alone cannot tell. `--expand`
turns it into the full form: each line the game asks a player for is the
next move; a move that breaks a rule is noted, then the farewell; when the
moves run out before the game is over, the players of the `!` lines forfeit
and the transcript stops (cut to its first N lines by `= N`).
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
from collections import deque

DISCIPLINE = "morabaraba"
FULL_MAGIC = "# knobeln transcript 2: "
MOVES_MAGIC = "# knobeln moves 2: "
# Format 1 (players numbered from 0 as seats): read by --expand, not written.
FULL_MAGIC_1 = "# KNOBELN transcript 1: "
MOVES_MAGIC_1 = "# KNOBELN moves 1: "
N_SEATS = 2
#: The wall clock a bot may be waited for in all in a game, in seconds
#: (--match-secs): the server's default, the start-up's 130 s and twice
#: the 120 s of CPU time a game may use.
DEFAULT_MATCH_SECS = 370

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
# The board (src/discipline/morabaraba/rules/board.rs).

N_POINTS = 24
COWS = 12
PLACING_TURNS = 24
FLYING_COWS = 3
LOSING_COWS = 2
THREE_COWS_DRAW_TURNS = 10
NO_MILL_DRAW_TURNS = 200
GAME_OVER_LINE = "0 0 0 0 0 0 0 0 0"

# (x, y) of the eight points of a square, in index order; point index =
# (square - 1) * 8 + k.
XY = [(1, 1), (2, 1), (3, 1), (1, 2), (3, 2), (1, 3), (2, 3), (3, 3)]


def p(x, y, s):
    return (s - 1) * 8 + XY.index((x, y))


def point_new(x, y, s):
    if 1 <= x <= 3 and 1 <= y <= 3 and 1 <= s <= 3 and (x, y) != (2, 2):
        return p(x, y, s)
    return None


def pt(q):
    """A point as the protocol writes it: `x y s`."""
    x, y = XY[q % 8]
    return "%d %d %d" % (x, y, q // 8 + 1)


MILLS = [
    # The sides of each square.
    (p(1, 1, 1), p(2, 1, 1), p(3, 1, 1)),
    (p(1, 3, 1), p(2, 3, 1), p(3, 3, 1)),
    (p(1, 1, 1), p(1, 2, 1), p(1, 3, 1)),
    (p(3, 1, 1), p(3, 2, 1), p(3, 3, 1)),
    (p(1, 1, 2), p(2, 1, 2), p(3, 1, 2)),
    (p(1, 3, 2), p(2, 3, 2), p(3, 3, 2)),
    (p(1, 1, 2), p(1, 2, 2), p(1, 3, 2)),
    (p(3, 1, 2), p(3, 2, 2), p(3, 3, 2)),
    (p(1, 1, 3), p(2, 1, 3), p(3, 1, 3)),
    (p(1, 3, 3), p(2, 3, 3), p(3, 3, 3)),
    (p(1, 1, 3), p(1, 2, 3), p(1, 3, 3)),
    (p(3, 1, 3), p(3, 2, 3), p(3, 3, 3)),
    # Through the corresponding side midpoints.
    (p(2, 1, 1), p(2, 1, 2), p(2, 1, 3)),
    (p(2, 3, 1), p(2, 3, 2), p(2, 3, 3)),
    (p(1, 2, 1), p(1, 2, 2), p(1, 2, 3)),
    (p(3, 2, 1), p(3, 2, 2), p(3, 2, 3)),
    # Through the corresponding corners.
    (p(1, 1, 1), p(1, 1, 2), p(1, 1, 3)),
    (p(1, 3, 1), p(1, 3, 2), p(1, 3, 3)),
    (p(3, 1, 1), p(3, 1, 2), p(3, 1, 3)),
    (p(3, 3, 1), p(3, 3, 2), p(3, 3, 3)),
]

NEIGHBOURS = [set() for _ in range(N_POINTS)]
for _a, _b, _c in MILLS:
    NEIGHBOURS[_a].add(_b)
    NEIGHBOURS[_b].update((_a, _c))
    NEIGHBOURS[_c].add(_b)


def mill_text(i):
    return ", ".join(pt(q) for q in MILLS[i])


def lowest_bit(bits):
    return (bits & -bits).bit_length() - 1


class MoveError(Exception):
    pass


SYNTAX = ("a move is nine numbers, each 0, 1, 2 or 3, separated by spaces "
          "(e.g. `0 0 0 2 3 1 0 0 0`)")
ASCII_WS = re.compile(r"[ \t\n\x0c\r]+")  # Rust's split_ascii_whitespace
DIGITS = {"0": 0, "1": 1, "2": 2, "3": 3}


def parse_move(line):
    """(from, to, shot), each a point or None; raises MoveError."""
    tokens = [t for t in ASCII_WS.split(line) if t]
    numbers = []
    for t in tokens:
        if len(numbers) == 9 or t not in DIGITS:
            raise MoveError(SYNTAX)
        numbers.append(DIGITS[t])
    if len(numbers) != 9:
        raise MoveError(SYNTAX)
    out = []
    for slot, k in (("first", 0), ("second", 3), ("last", 6)):
        x, y, s = numbers[k:k + 3]
        if (x, y, s) == (0, 0, 0):
            out.append(None)
            continue
        q = point_new(x, y, s)
        if q is None:
            raise MoveError(
                "the %s three numbers `%d %d %d` are not a point: a point is `x y s` with x, "
                "y and s in 1\u20133 and not x = y = 2, or `0 0 0` for none" % (slot, x, y, s))
        out.append(q)
    return tuple(out)


def move_line(mv):
    return " ".join("0 0 0" if q is None else pt(q) for q in mv)


class Position:
    def __init__(self):
        self.cells = [None] * N_POINTS
        self.in_hand = [COWS, COWS]
        self.to_move = 0
        self.turn = 0
        self.turns_since_mill = 0
        self.forbidden = [0, 0]

    def on_board(self, player):
        return sum(1 for c in self.cells if c == player)

    def cows(self, player):
        return self.on_board(player) + self.in_hand[player]

    def placing(self):
        return self.turn < PLACING_TURNS

    def flying(self, player):
        return not self.placing() and self.cows(player) == FLYING_COWS

    def mills_of(self, player, q, cells):
        bits = 0
        for i, line in enumerate(MILLS):
            if q in line and all(cells[r] == player for r in line):
                bits |= 1 << i
        return bits

    def in_mill(self, q):
        owner = self.cells[q]
        return owner is not None and self.mills_of(owner, q, self.cells) != 0

    def check_way(self, mv):
        me = self.to_move
        frm, to, _ = mv
        if self.placing():
            if frm is not None:
                raise MoveError("in the first %d turns cows are placed, not moved: the first "
                                "three numbers must be `0 0 0`" % PLACING_TURNS)
        else:
            if frm is None:
                raise MoveError("after the first %d turns a cow is moved: the first three "
                                "numbers must name one of your cows" % PLACING_TURNS)
            if self.cells[frm] != me:
                raise MoveError("there is no cow of yours on %s" % pt(frm))
        if to is None:
            raise MoveError("the second three numbers must name the point the cow goes to")
        if self.cells[to] is not None:
            raise MoveError("the point %s is not free" % pt(to))
        if frm is not None and not self.flying(me) and to not in NEIGHBOURS[frm]:
            raise MoveError("%s and %s are not neighbours on a line: a cow moves along a line "
                            "to the next point; only a player with three cows may fly anywhere"
                            % (pt(frm), pt(to)))
        broken = 0 if frm is None else self.mills_of(me, frm, self.cells)
        after = list(self.cells)
        if frm is not None:
            after[frm] = None
        after[to] = me
        formed = self.mills_of(me, to, after)
        again = formed & self.forbidden[me]
        if again:
            raise MoveError("the move forms the mill %s again, which your previous move broke "
                            "while forming another mill; that mill may not be formed again on "
                            "your very next turn" % mill_text(lowest_bit(again)))
        return after, formed, broken

    def targets(self):
        them = 1 - self.to_move
        cows = [q for q in range(N_POINTS) if self.cells[q] == them]
        free = [q for q in cows if not self.in_mill(q)]
        return free if free else cows

    def play(self, mv):
        me = self.to_move
        after, formed, broken = self.check_way(mv)
        them = 1 - me
        shot = mv[2]
        if not formed:
            if shot is not None:
                raise MoveError("the move forms no mill, so the last three numbers must be "
                                "`0 0 0`")
        else:
            targets = self.targets()
            if shot is None:
                if targets:
                    raise MoveError("the move forms a mill, so the last three numbers must "
                                    "name one of the opponent's cows to shoot")
            elif not targets:
                raise MoveError("the opponent has no cows on the board to shoot, so the last "
                                "three numbers must be `0 0 0`")
            elif self.cells[shot] != them:
                raise MoveError("there is no opponent's cow on %s to shoot" % pt(shot))
            elif shot not in targets:
                raise MoveError("the cow on %s is in a mill; while the opponent has cows "
                                "outside mills, one of those must be shot" % pt(shot))
            else:
                after[shot] = None
        self.cells = after
        if mv[0] is None:
            self.in_hand[me] -= 1
        self.turn += 1
        self.turns_since_mill = 0 if formed else self.turns_since_mill + 1
        self.forbidden[me] = broken if (formed and broken) else 0
        self.to_move = them

    def has_legal_move(self):
        me = self.to_move
        if self.placing():
            return any(c is None for c in self.cells)
        for frm in range(N_POINTS):
            if self.cells[frm] != me:
                continue
            for to in range(N_POINTS):
                try:
                    self.check_way((frm, to, None))
                    return True
                except MoveError:
                    pass
        return False

    def status(self):
        """None while the game goes on, else (end, loser or None)."""
        for player in (0, 1):
            if self.cows(player) <= LOSING_COWS:
                return ("TwoCowsLeft", player)
        three = any(self.cows(player) == FLYING_COWS for player in (0, 1))
        if three and self.turns_since_mill >= THREE_COWS_DRAW_TURNS:
            return ("ThreeCowsNoMill", None)
        if self.turns_since_mill >= NO_MILL_DRAW_TURNS:
            return ("NoMillIn200Turns", None)
        if not self.has_legal_move():
            return ("NoLegalMove", self.to_move)
        return None


def valid_name(name):
    return (3 <= len(name.encode("utf-8")) <= 9
            and all(c.isascii() and c.isalnum() for c in name))


# ---------------------------------------------------------------------------
# The game (src/discipline/morabaraba/rules.rs: MorabarabaGame), a pure state machine.

class Violation:
    def __init__(self, seat, rule, line):
        self.seat = seat
        self.rule = rule
        self.line = line


def counted(n, one, many):
    """`n` and the noun in the number `n` asks for: "1 round", "2 rounds"
    (the server's words::counted)."""
    return "1 %s" % one if n == 1 else "%d %s" % (n, many)


def end_sentence(end, loser, detail):
    """How a game ended, as a sentence for people (the server's
    MorabarabaEnd as it prints)."""
    who = "player %d" % (loser + 1) if loser is not None else ""
    if end == "TwoCowsLeft":
        return "%s has two cows left" % who
    if end == "NoLegalMove":
        return "%s has no legal move" % who
    if end == "IllegalMove":
        return "%s broke a rule: %s" % (who, detail[1])
    if end == "Forfeit":
        return "%s forfeited: %s" % (who, detail[1])
    if end == "ThreeCowsNoMill":
        return "a player had three cows and ten turns formed no mill"
    return "no mill in 200 turns"


class MorabarabaGame:
    def __init__(self):
        self.position = Position()
        self.names = [None, None]
        self.outbox = deque(("send", seat, [str(seat + 1)]) for seat in range(2))
        self.outcome = None

    def finish(self, end, loser, detail=None):
        self.outcome = {
            "winner": None if loser is None else 1 - loser,
            "end": end_sentence(end, loser, detail),
            "turns": self.position.turn,
            "cows": [self.position.cows(0), self.position.cows(1)],
        }

    def forfeit(self, seat, reason):
        if self.outcome is None:
            self.outbox.clear()
            self.finish("Forfeit", seat, ("reason", reason))

    def expected_seat(self):
        for seat in (0, 1):
            if self.names[seat] is None:
                return seat
        return self.position.to_move

    def next(self):
        if self.outbox:
            return self.outbox.popleft()
        if self.outcome is not None:
            return ("over", [(seat, [GAME_OVER_LINE]) for seat in (0, 1)])
        return ("expect", self.expected_seat())

    def violation(self, seat, rule, line):
        if self.outcome is None:
            self.outbox.clear()
            self.finish("IllegalMove", seat, ("rule", rule))
        return Violation(seat, rule, line)

    def reply(self, seat, line):
        if seat > 1:
            return Violation(seat, "a game of Morabaraba has seats 0 and 1 only", line)
        if self.outcome is not None or seat != self.expected_seat():
            return self.violation(seat, "it was not this player's turn to write", line)
        if self.names[seat] is None:
            name = rust_trim(line)
            if not valid_name(name):
                return self.violation(
                    seat, "after its player number (%d) a bot answers with its name: 3 to 9 "
                    "letters a-z, A-Z or digits 0-9" % (seat + 1), line)
            self.names[seat] = name
            return None
        turn = self.position.turn + 1
        try:
            mv = parse_move(line)
            self.position.play(mv)
        except MoveError as e:
            return self.violation(seat, "turn %d: illegal move: %s" % (turn, e), line)
        status = self.position.status()
        if status is None:
            self.outbox.append(("send", 1 - seat, [move_line(mv)]))
        else:
            self.finish(status[0], status[1])
        return None

    def turn(self):
        return self.position.turn + (1 if self.outcome is None else 0)

    def summary(self, names):
        o = self.outcome
        if o is None:
            return ["no outcome"]
        who = "draw" if o["winner"] is None else "%s wins" % names[o["winner"]]
        return ["%s after %s (%s); cows left %d / %d"
                % (who, counted(o["turns"], "turn", "turns"), o["end"], o["cows"][0],
                   o["cows"][1])]


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
# Morabaraba's setup: nothing but the seats.

def params_lines(*setup):
    return []


def setup_of_header(head):
    return ()


def new_game(setup):
    return MorabarabaGame()


# ---------------------------------------------------------------------------
# Command line.

def build_parser():
    p = argparse.ArgumentParser(
        prog="referee.py",
        description="Morabaraba's home referee: plays one game between two bots exactly "
                    "as the contest server does (see the top of this file).")
    p.add_argument("--transcript", metavar="FILE",
                   help="write the full transcript there (default: standard output)")
    p.add_argument("--moves", metavar="FILE", help="also write the moves form there")
    p.add_argument("--reply-secs", type=float, default=10.0,
                   help="wall-clock seconds per line of a bot (default 10)")
    p.add_argument("--match-secs", type=float, default=float(DEFAULT_MATCH_SECS),
                   help="wall-clock seconds a bot may be waited for in all in the game, "
                        "its start-up and its lines together (default %d, the "
                        "server's)" % DEFAULT_MATCH_SECS)
    p.add_argument("--name0", metavar="NAME", help="player 1's name in the header")
    p.add_argument("--name1", metavar="NAME", help="player 2's name in the header")
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
        return play_main(args)
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


def play_main(args):
    if len(args.bots) != N_SEATS:
        raise UsageError("Morabaraba is played by two bots: give two bot commands "
                         "(e.g. ./mybot 'python3 other.py'); see --help")
    if not args.reply_secs > 0:
        raise UsageError("--reply-secs must be positive")
    if not args.match_secs > 0:
        raise UsageError("--match-secs must be positive")
    setup = ()
    given = [args.name0, args.name1]
    names = [given[i] or default_name(c) for i, c in enumerate(args.bots)]
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
