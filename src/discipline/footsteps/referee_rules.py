#!/usr/bin/env python3
"""Home referee for FootSteps (2007) of KNOBELN.

Plays one game between two bots on your own machine, with the same rules,
the same lines in the same order and the same transcript as the contest
server, so that you can test your bot before you send it in and replay a
game the server mailed you.

Python 3.9 or later, standard library only. Nothing to install.

THE GAME
    A token sits on the middle field of a strip of F fields (7 in the
    contest, numbered 0..6). Player 1 (the first bot named, the left player)
    wants it on field 0, player 2 (the right player) on the last field. Each
    starts with P points (50). Every turn both bid in secret; the higher bid
    moves the token one field toward its bidder's goal, equal bids leave it;
    both lose what they bid. A bid must be at least 1 while the bidder has
    points and 0 once it has none. Whoever brings the token to its goal
    wins; if both are out of points before that, the game is a draw.

    The protocol: a bot prints its bid (a decimal number alone on its line)
    at once, without being asked, then reads one line: the opponent's bid,
    or "fin" when the game is over (then it ends); after a bid it bids again.
    A bid is decimal digits (leading zeros allowed, a "-" is read so that a
    negative bid is reported as such); a line may end with CR LF. An illegal
    bid (below 1 or above the points left, not 0 without points, not a
    number) loses the game; the bids of a turn are judged together, so if
    both are illegal both lose (nobody wins). A bot that crashes, ends early
    or does not answer in time loses the same way.

RUNNING A GAME
    A bot is a command line (split like a shell would, but not run by one);
    it reads the referee's lines on standard input and prints its own lines
    on standard output. Flush after every line!

        gcc -O2 -o mybot mybot.c
        python3 referee.py ./mybot ./other
        python3 referee.py 'python3 mybot.py' ./mybot
        python3 referee.py --fields 5 --points 20 ./mybot 'python3 other.py'
        python3 referee.py --transcript game.txt --moves game.moves \\
            --name0 me --name1 you ./mybot 'python3 mybot.py'

    Options:
        --fields N        fields of the strip, odd, 3..1001 (default 7)
        --points N        points each bot starts with (default 50)
        --transcript FILE write the full transcript to FILE ('-' or no
                          --transcript: standard output)
        --moves FILE      also write the compact moves form to FILE
        --reply-secs S    wall-clock seconds a bot has for each line, and
                          to come back to its input after it (default 10)
        --match-secs S    wall-clock seconds a bot may be waited for in
                          all in the game, its start-up, its returns to
                          its input and its bids
                          together (default 30, the server's)
        --name0/--name1 N the names of players 1 and 2 in the header (default: the
                          command's program name)
        --quiet-bots      discard the bots' standard error (default: it is
                          passed through to yours)
        --expand FILE     read a moves form and write its full transcript
                          (no bots are run)

    The result (winner, how, token, points left, failures) goes to standard
    error, like the server's summary. Exit status: 0 when the game was
    refereed (whatever the bots did), 1 when a moves file does not fit the
    game, 2 on a usage error (bad option, a bot that cannot be started).

THE FULL TRANSCRIPT (--transcript)
        # knobeln transcript 2: footsteps
        # fields: 7
        # points: 50
        # player 1: mybot
        # player 2: other
        from 1: 8
        from 2: 5
        to 1: 5
        to 2: 8
        ...
        to 1: fin
        to 2: fin
    One exchange per line: "to P: LINE" (the referee to player P, 1 or 2)
    or "from P: LINE" (what player P printed, as the rules read it: blanks
    around it and a CR at the end left out; a line that broke a rule as
    printed; at most 256 bytes of either), in the order the server records
    them (player 1's bid, then player 2's, then each is told the other's), the
    final "fin" lines included. An illegal bid is written, then the "fin"
    lines; a bot that failed outside the rules (crashed, ended, too slow)
    has no line written for it and nobody gets "fin". Control characters in
    a line are written as \\xNN and a backslash as \\\\ (one exchange stays
    one line). Lines starting with # are comments: the header, and at the
    end "# failure: player P: ..." and "# result: ...". The "to"/"from" lines
    are equal, line for line, to the transcript the contest server records
    for the same bots and parameters.

THE MOVES FORM (--moves, and what you get by mail)
        # knobeln moves 2: footsteps
        # fields: 7
        # points: 50
        # player 1: mybot
        # player 2: other
        1: 8
        2: 5
        ...
        ! 2: player 2, turn 4: ended before the game was over (exit status 1)
        = 13
    Only what the bots printed ("S: LINE", same quoting), and after the last
    move one "! P: reason" line per player that failed outside the rules and
    a last line "= N". "= N" says how many lines the transcript had: a bot
    that quit is noticed where a write to it fails, which the rules alone
    cannot tell. Everything else the referee said follows from the rules:

        python3 referee.py --expand game.moves --transcript game.txt

    replays the moves through this referee's game (when the game asks a
    player for a line it takes the next move; a move that breaks a rule is
    written, then "fin"; when the moves run out before the game is over,
    the "!" players forfeit and the transcript stops there, cut to its first
    N lines by "= N") and writes the full transcript, the same as the
    server's.

WHAT IS NOT REPRODUCED
    The server runs bots in a sandbox with CPU-time limits (2 s per bid,
    and what a bot computes after a bid before it reads on counts toward
    the next one; 10 s per game), a memory limit (256 MB) and its own
    wall-clock backstops; this referee only has the wall clock: a limit
    per line (--reply-secs, also for coming back to its input after a
    bid) and, as the server, the game's waiting budget: each bot may be
    waited for at most --match-secs in all (default 30 s, the server's:
    the start-up's 10 s and twice the 10 s of CPU time of a game), its
    start-up, its bids and its returns to its input together. It has no
    sandbox, CPU or memory limits. Lines longer than 4096 bytes and
    output that is not UTF-8 fail, as on the server.
    A bot that ends right after printing a line: the server finds out
    either when it next writes to it (the write fails) or when it next
    waits for its line, depending on how quickly the process is gone (on
    the server too); here a write fails sooner, as no sandbox slows the
    exit down. The transcripts then differ only in the lines sent between
    these two points. --expand follows the "= N" line (a moves form
    without one: it decides by the turn the "!" line names).
"""

import argparse
import os
import select
import shlex
import signal
import subprocess
import sys
import time
import unicodedata
from collections import deque

DISCIPLINE = "footsteps"

# ---------------------------------------------------------------------------
# The game (a port of src/discipline/footsteps/rules.rs)
# ---------------------------------------------------------------------------


def validate_params(fields, points):
    if fields < 3 or fields > 1001 or fields % 2 == 0:
        return "fields must be odd and in 3..=1001 (got %d)" % fields
    if not 1 <= points <= 1000000:
        return "points must be in 1..=1000000 (got %d)" % points
    return None


def judge_bid(line, has):
    """Reads a bid and checks it against the bidder's points (has):
    (bid, None) or (None, the rule broken)."""
    s = line.strip(" \t\r")  # as the server's game::lines::trimmed
    negative = s.startswith("-")
    digits = s[1:] if negative else s
    if not digits or not all("0" <= c <= "9" for c in digits):
        return None, 'a bid is a whole number in decimal digits, alone on its line (e.g. "7")'
    significant = digits.lstrip("0")
    # Anything longer than 10 digits is far above any purse.
    value = 2 ** 64 - 1 if len(significant) > 10 else int(significant or "0")
    shown = quote_rule(s)
    if has == 0:
        if value == 0:
            return 0, None
        return None, "bid %s, but a bot that has no points left must bid 0" % shown
    if negative or value < 1:
        return None, (
            "bid %s, but a bid must be at least 1 while the bot has points (it has %d)" % (shown, has)
        )
    if value > has:
        return None, "bid %s, but the bot has only %d point%s left" % (shown, has, "" if has == 1 else "s")
    return value, None


class Game:
    """One game. next() returns ("send", seat, [lines]), ("expect", seat)
    or ("over", [(seat, [lines]), ...]); reply() returns None or a
    Violation."""

    n_seats = 2

    def __init__(self, fields, points):
        self.fields = fields
        self.start_points = points
        self.position = fields // 2
        self.points = [points, points]
        self.bids = []
        self.collected = [None, None]  # ((bid, rule), line) of this turn
        self.pending = deque()
        self.expecting = None
        # The outcome: (winner, ending, position, points_left, turns).
        self.outcome = None

    def goal(self, seat):
        return 0 if seat == 0 else self.fields - 1

    def _end(self, winner, ending):
        self.outcome = (winner, ending, self.position, list(self.points), len(self.bids))
        self.expecting = None

    def _play_turn(self, b0, b1):
        self.points[0] -= b0
        self.points[1] -= b1
        if b0 > b1:
            self.position -= 1
        elif b0 < b1:
            self.position += 1
        self.bids.append((b0, b1))
        if self.position == self.goal(0):
            self._end(0, GOAL)
        elif self.position == self.goal(1):
            self._end(1, GOAL)
        elif self.points == [0, 0]:
            self._end(None, OUT_OF_POINTS)
        else:
            self.pending.append(("send", 0, [str(b1)]))
            self.pending.append(("send", 1, [str(b0)]))

    def _judge_turn(self):
        (bid0, rule0), line0 = self.collected[0]
        (bid1, rule1), line1 = self.collected[1]
        self.collected = [None, None]
        if rule0 is None and rule1 is None:
            self._play_turn(bid0, bid1)
            return None
        if rule1 is None:
            self._end(1, "player 1 made an illegal bid")
            return Violation(0, rule0, line0)
        if rule0 is None:
            self._end(0, "player 2 made an illegal bid")
            return Violation(1, rule1, line1)
        self._end(None, "both players made an illegal bid")
        return Violation(
            0,
            "%s (the other bot's bid in this turn was illegal too: %s)" % (rule0, rule1),
            line0,
        )

    def next(self):
        if self.expecting is not None:
            return ("expect", self.expecting)
        if self.pending:
            return self.pending.popleft()
        if self.outcome is not None:
            return ("over", [(0, ["fin"]), (1, ["fin"])])
        seat = 0 if self.collected[0] is None else 1
        self.expecting = seat
        return ("expect", seat)

    def reply(self, seat, line):
        if self.outcome is not None:
            return Violation(seat, "printed a line after the end of the game", line)
        if self.expecting != seat:
            self.pending.clear()
            self._end(
                1 - seat,
                "player %d made an illegal bid" % (seat + 1),
            )
            return Violation(
                seat,
                "printed a line when it was not its turn: a bot prints one bid, then "
                "reads the opponent's bid before it bids again",
                line,
            )
        self.expecting = None
        self.collected[seat] = (judge_bid(line, self.points[seat]), line)
        if seat == 0:
            return None
        return self._judge_turn()

    def forfeit(self, seat):
        if self.outcome is None:
            self.pending.clear()
            self._end(1 - seat, "player %d forfeited" % (seat + 1))

    def turn(self):
        done = len(self.bids)
        if self.outcome is not None and self.outcome[1] in (GOAL, OUT_OF_POINTS):
            return done
        return done + 1

    @property
    def over(self):
        return self.outcome is not None

    def summary(self, names):
        """As the server's Played::summary (without CPU times)."""
        if self.outcome is None:
            return ["no outcome"]
        winner, ending, position, left, turns = self.outcome
        who = "%s wins" % names[winner] if winner is not None else "draw"
        return [
            "%s (%s) after %s; token on field %d, points left %d / %d"
            % (who, ending, counted(turns, "turn", "turns"), position, left[0], left[1])
        ]


#: How a game ended, as the server's Ending says it (the sentences
#: for people).
GOAL = "the token reached a goal"
OUT_OF_POINTS = "both players ran out of points"


def header_params(fields, points):
    return ["fields: %d" % fields, "points: %d" % points]


#: The wall clock a bot may be waited for in all in a game, in seconds
#: (--match-secs): the server's default, the start-up's 10 s and twice
#: the 10 s of CPU time a game may use.
DEFAULT_MATCH_SECS = 30


def add_params(ap):
    ap.add_argument("--fields", type=int, default=None, help="fields of the strip (default 7)")
    ap.add_argument("--points", type=int, default=None, help="points of each bot (default 50)")


def params_from(args, values):
    """The game's parameters: the options, else the moves header, else the
    contest's defaults. Returns (make_game, header params) or exits 2."""
    got = {}
    for key, default in (("fields", 7), ("points", 50)):
        v = getattr(args, key)
        if v is None:
            try:
                v = int(values.get(key, str(default)))
            except ValueError:
                usage_error("the header's %s is not a number" % key)
        got[key] = v
    fields, points = got["fields"], got["points"]
    err = validate_params(fields, points)
    if err:
        usage_error(err)
    return (lambda: Game(fields, points)), header_params(fields, points)


