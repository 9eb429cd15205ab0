#!/usr/bin/env python3
"""Home referee for the ultimatum game (freiesMagazin 2011) of KNOBELN.

Plays one match between two bots on your own machine, with the same rules,
the same lines in the same order and the same transcript as the contest
server, so that you can test your bot before you send it in and replay a
game the server mailed you.

Python 3.9 or later, standard library only. Nothing to install.

THE GAME
    A match has R rounds (2500 in the contest). In every round each bot
    proposes once, player 1 (the first bot named) first: it offers the other
    an amount x of 0..1000; the other answers JA (it gets x, the proposer
    1000 - x) or NEIN (nobody gets anything). Lines the referee sends:
    RUNDEN n (once), RUNDE r, START (to the proposer, which prints its
    offer), ANGEBOT x (to the responder, which prints JA or NEIN), then JA
    or NEIN and PUNKTE p to the proposer, PUNKTE q to the responder, and
    ENDE to both at the end (also after a rule violation).

    Strict: an offer is decimal digits only (leading zeros allowed, no sign,
    no blanks) from 0 to 1000; an answer is exactly JA or NEIN in capitals.
    A line may end with CR LF. Anything else breaks the rules: the match
    ends at once, the bot that broke them scores 0 and loses, the other
    keeps what it earned in the completed half-rounds and wins. A bot that
    crashes, ends early or does not answer in time forfeits the same way.

RUNNING A MATCH
    A bot is a command line (split like a shell would, but not run by one);
    it reads the referee's lines on standard input and prints its own lines
    on standard output. Flush after every line!

        gcc -O2 -o mybot mybot.c
        python3 referee.py ./mybot ./other
        python3 referee.py 'python3 mybot.py' ./mybot
        python3 referee.py --rounds 5 './mybot' 'python3 other.py'
        python3 referee.py --transcript game.txt --moves game.moves \\
            --name0 me --name1 you ./mybot 'python3 mybot.py'

    Options:
        --rounds N        rounds of the match (default 2500, as the contest)
        --transcript FILE write the full transcript to FILE ('-' or no
                          --transcript: standard output)
        --moves FILE      also write the compact moves form to FILE
        --reply-secs S    wall-clock seconds a bot has for each line, and
                          to come back to its input after it (default 10)
        --match-secs S    wall-clock seconds a bot may be waited for in
                          all in the match, its start-up, its answers and
                          its returns to its input together (default 120,
                          the server's)
        --name0/--name1 N the names of players 1 and 2 in the header (default: the
                          command's program name)
        --quiet-bots      discard the bots' standard error (default: it is
                          passed through to yours)
        --expand FILE     read a moves form and write its full transcript
                          (no bots are run)

    The result (points, won/lost, failures) goes to standard error, like
    the server's summary. Exit status: 0 when the match was refereed
    (whatever the bots did), 1 when a moves file does not fit the game,
    2 on a usage error (bad option, a bot that cannot be started).

THE FULL TRANSCRIPT (--transcript)
        # knobeln transcript 2: ultimatum
        # rounds: 2500
        # player 1: mybot
        # player 2: other
        to 1: RUNDEN 2500
        to 2: RUNDEN 2500
        to 2: RUNDE 1
        to 1: RUNDE 1
        to 1: START
        from 1: 400
        ...
    One exchange per line: "to P: LINE" (the referee to player P, 1 or 2)
    or "from P: LINE" (what player P printed, as the rules read it: blanks
    around it and a CR at the end left out; a line that broke a rule as
    printed; at most 256 bytes of either), in the order the server records
    them, the final ENDE lines included. A rule-breaking line is written,
    then the ENDE lines; a bot that failed outside the rules (crashed,
    ended, too slow) has no line written for it and nobody gets ENDE.
    Control characters in a line are written as \\xNN and a backslash as
    \\\\ (one exchange stays one line). Lines starting with # are comments:
    the header, and at the end "# failure: player P: ..." and "# result: ...".
    The "to"/"from" lines are equal, line for line, to the transcript the
    contest server records for the same bots and rounds.

THE MOVES FORM (--moves, and what you get by mail)
        # knobeln moves 2: ultimatum
        # rounds: 2500
        # player 1: mybot
        # player 2: other
        1: 400
        2: JA
        ...
        ! 2: player 2, turn 17: crashed (segmentation fault, SIGSEGV)
        = 263
    Only what the bots printed ("S: LINE", same quoting), and after the last
    move one "! P: reason" line per player that failed outside the rules and
    a last line "= N". "= N" says how many lines the transcript had: a bot
    that quit is noticed where a write to it fails, which the rules alone
    cannot tell. Everything else the referee said follows from the rules:

        python3 referee.py --expand game.moves --transcript game.txt

    replays the moves through this referee's game (when the game asks a
    player for a line it takes the next move; a move that breaks a rule is
    written, then ENDE; when the moves run out before the game is over, the
    "!" players forfeit and the transcript stops there, cut to its first N
    lines by "= N") and writes the full transcript, the same as the
    server's.

WHAT IS NOT REPRODUCED
    The server runs bots in a sandbox with CPU-time limits (2 s per answer,
    and what a bot computes after an answer before it reads on counts
    toward the next one; 60 s per match), a memory limit (256 MB) and its
    own wall-clock backstops; this referee only has the wall clock: a
    limit per line (--reply-secs, also for coming back to its input after
    an answer) and, as the server, the match's waiting budget: each bot
    may be waited for at most --match-secs in all (default 120 s, the
    server's: twice the entry condition's 60 s), its start-up, its answers
    and its returns to its input together. It has no sandbox, CPU or
    memory limits.
    Lines longer than 4096 bytes and output that is not UTF-8 fail, as
    on the server.
    A bot that ends right after printing a line: the server finds out
    either when it next writes to it (the write fails) or when it next
    waits for its line, depending on how quickly the process is gone (on
    the server too); here a write fails sooner, as no sandbox slows the
    exit down. The transcripts then differ only in the lines sent between
    these two points. --expand follows the "= N" line (a moves form
    without one: it decides by the turn the "!" line names). The
    server keeps at most 200000 lines of a transcript (a match of more than
    about 22000 rounds is cut there); this referee writes them all.
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

DISCIPLINE = "ultimatum"

# ---------------------------------------------------------------------------
# The game (a port of src/discipline/ultimatum/rules.rs)
# ---------------------------------------------------------------------------

POT = 1000
MAX_ROUNDS = 1000000


def validate_params(rounds):
    if not 1 <= rounds <= MAX_ROUNDS:
        return "rounds must be in 1..=%d (got %d)" % (MAX_ROUNDS, rounds)
    return None


def without_cr(line):
    # Blanks around a number or word and CRs at the end do not count, as
    # the 2011 engine read from a stream (the server's game::lines::trimmed).
    return line.strip(" \t\r")


def is_ascii_digits(s):
    return all("0" <= c <= "9" for c in s)


def parse_offer(line):
    """(offer, None) or (None, rule broken)."""
    s = without_cr(line)
    if not s or not is_ascii_digits(s):
        return None, (
            "after START a bot prints its offer: a whole number from 0 to %d, digits only, "
            'alone on its line (e.g. "400")' % POT
        )
    digits = s.lstrip("0")
    if len(digits) > 4 or int(digits or "0") > POT:
        return None, (
            "offered %s, but an offer must be from 0 to %d (the pot of every half-round)"
            % (quote_rule(s), POT)
        )
    return int(digits or "0"), None


def parse_answer(line):
    """(accepted, None) or (None, rule broken)."""
    s = without_cr(line)
    if s == "JA":
        return True, None
    if s == "NEIN":
        return False, None
    return None, (
        "after ANGEBOT a bot answers JA (accept) or NEIN (reject), in capitals, "
        "alone on its line"
    )


class Game:
    """One match. next() returns ("send", seat, [lines]), ("expect", seat)
    or ("over", [(seat, [lines]), ...]); reply() returns None or a
    Violation."""

    n_seats = 2

    def __init__(self, rounds):
        self.rounds = rounds
        self.round = 1
        self.proposer = 0
        self.awaiting_offer = True
        self.offer = 0
        self.pending = deque()
        self.expecting = None
        self.over = False
        self.last_half = None  # (round, proposer) of the last completed half-round
        self.points = [0, 0]
        self.accepted_offers = [0, 0]
        self.forfeited_by = None
        runden = "RUNDEN %d" % rounds
        self._send(0, runden)
        self._send(1, runden)
        self._start_round()

    def _send(self, seat, line):
        if self.pending and self.pending[-1][0] == "send" and self.pending[-1][1] == seat:
            self.pending[-1][2].append(line)
            return
        self.pending.append(["send", seat, [line]])

    def _start_round(self):
        runde = "RUNDE %d" % self.round
        self._send(1, runde)
        self._send(0, runde)
        self.proposer = 0
        self._start_half()

    def _start_half(self):
        self._send(self.proposer, "START")
        self.awaiting_offer = True
        self.pending.append(["expect", self.proposer])

    def _finish(self):
        self.over = True
        self.expecting = None

    def _violation(self, seat, rule, line):
        self.forfeited_by = seat
        self.pending.clear()
        self._finish()
        return Violation(seat, rule, line)

    def _settle(self, offer, accepted):
        p = [0, 0]
        if accepted:
            p[self.proposer] = POT - offer
            p[1 - self.proposer] = offer
        self.last_half = (self.round, self.proposer)
        self.points[0] += p[0]
        self.points[1] += p[1]
        if accepted:
            self.accepted_offers[self.proposer] += 1
        proposer, responder = self.proposer, 1 - self.proposer
        self._send(proposer, "JA" if accepted else "NEIN")
        self._send(proposer, "PUNKTE %d" % p[proposer])
        self._send(responder, "PUNKTE %d" % p[responder])
        if proposer == 0:
            self.proposer = 1
            self._start_half()
        elif self.round < self.rounds:
            self.round += 1
            self._start_round()
        else:
            self._finish()

    def next(self):
        if self.expecting is not None:
            return ("expect", self.expecting)
        if self.pending:
            step = self.pending.popleft()
            if step[0] == "expect":
                self.expecting = step[1]
                return ("expect", step[1])
            return ("send", step[1], step[2])
        return ("over", [(0, ["ENDE"]), (1, ["ENDE"])])

    def reply(self, seat, line):
        if self.over:
            return Violation(seat, "printed a line after the end of the match", line)
        if self.expecting != seat:
            return self._violation(
                seat,
                "printed a line when it was not its turn: a bot speaks only after "
                "START (its offer) and after ANGEBOT (JA or NEIN)",
                line,
            )
        self.expecting = None
        if self.awaiting_offer:
            offer, rule = parse_offer(line)
            if rule is not None:
                return self._violation(seat, rule, line)
            responder = 1 - self.proposer
            self._send(responder, "ANGEBOT %d" % offer)
            self.awaiting_offer = False
            self.offer = offer
            self.pending.append(["expect", responder])
            return None
        accepted, rule = parse_answer(line)
        if rule is not None:
            return self._violation(seat, rule, line)
        self._settle(self.offer, accepted)
        return None

    def forfeit(self, seat):
        if not self.over:
            self.forfeited_by = seat
            self.pending.clear()
            self._finish()

    def turn(self):
        return self.round

    # -- the outcome ---------------------------------------------------------

    def rounds_completed(self):
        if self.last_half is None:
            return 0
        r, proposer = self.last_half
        return r if proposer == 1 else r - 1

    def scored(self):
        s = list(self.points)
        if self.forfeited_by is not None:
            s[self.forfeited_by] = 0
        return s

    def result_for(self, seat):
        if self.forfeited_by is not None:
            return "lost" if self.forfeited_by == seat else "won"
        a, b = self.points[seat], self.points[1 - seat]
        return "won" if a > b else ("draw" if a == b else "lost")

    def summary(self, names):
        """As the server's Played::summary (without CPU times)."""
        if not self.over:
            return ["no outcome"]
        out = []
        done = self.rounds_completed()
        for i, pts in enumerate(self.scored()):
            out.append(
                "%s: %s (%s), %d of %s accepted"
                % (names[i], counted(pts, "point", "points"), self.result_for(i),
                   self.accepted_offers[i], counted(done, "offer", "offers"))
            )
        out.append("rounds completed: %d of %d" % (done, self.rounds))
        return out


def header_params(rounds):
    return ["rounds: %d" % rounds]


#: The wall clock a bot may be waited for in all in a match, in seconds
#: (--match-secs): the server's default, twice the entry condition's
#: 60 s ([ultimatum] entry_secs).
DEFAULT_MATCH_SECS = 120


def add_params(ap):
    ap.add_argument("--rounds", type=int, default=None, help="rounds of the match (default 2500)")


def params_from(args, values):
    """The game's parameters: the option, else the moves header, else the
    contest's default. Returns (make_game, header params) or exits 2."""
    rounds = args.rounds
    if rounds is None:
        try:
            rounds = int(values.get("rounds", "2500"))
        except ValueError:
            usage_error("the header's rounds is not a number")
    err = validate_params(rounds)
    if err:
        usage_error("--rounds: " + err)
    return (lambda: Game(rounds)), header_params(rounds)


