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
    --reply-secs S      wall-clock seconds a bot has for each line, and
                        to come back to its input after it (default 10)
    --match-secs S      wall-clock seconds a bot may be waited for in
                        all in the game, its start-up, its lines and
                        its returns to its input together (default 370,
                        the server's)
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
for each bot in all in the game, its start-up, its lines and its
returns to its input together
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
N_SEATS = 2
#: The wall clock a bot may be waited for in all in a game, in seconds
#: (--match-secs): the server's default, the start-up's 130 s and twice
#: the 120 s of CPU time a game may use.
DEFAULT_MATCH_SECS = 370

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
# Morabaraba's setup: nothing but the seats.

def params_lines(*setup):
    return []


def setup_of_header(head):
    return ()


def new_game(setup):
    return MorabarabaGame()


# ---------------------------------------------------------------------------
# Command line: what the driver (game_driver.py) asks of Morabaraba.

PARSER_DESCRIPTION = ("Morabaraba's home referee: plays one game between two bots exactly "
                      "as the contest server does (see the top of this file).")
#: Who the limits' options speak of.
THE_BOT = "a bot"


def add_game_options(p):
    pass


def add_name_options(p):
    p.add_argument("--name0", metavar="NAME", help="player 1's name in the header")
    p.add_argument("--name1", metavar="NAME", help="player 2's name in the header")


def check_play_args(args):
    if len(args.bots) != N_SEATS:
        raise UsageError("Morabaraba is played by two bots: give two bot commands "
                         "(e.g. ./mybot 'python3 other.py'); see --help")


def play_setup(args):
    return ()


def heading_lines(setup):
    return []


