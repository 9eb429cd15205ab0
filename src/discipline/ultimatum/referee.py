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
        --reply-secs S    wall-clock seconds a bot has for each line
                          (default 10)
        --match-secs S    wall-clock seconds a bot may be waited for in
                          all in the match, its start-up and its answers
                          together (default 120, the server's)
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
    60 s per match), a memory limit (256 MB) and its own wall-clock
    backstops; this referee only has the wall clock: a limit per line
    (--reply-secs) and, as the server, the match's waiting budget: each
    bot may be waited for at most --match-secs in all (default 120 s,
    the server's: twice the entry condition's 60 s), its start-up and
    its answers together. It has no sandbox, CPU or memory limits.
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
FULL_MAGIC = "# knobeln transcript 2: "
MOVES_MAGIC = "# knobeln moves 2: "
# Format 1 (players numbered from 0 as seats): read by --expand, not written.
FULL_MAGIC_1 = "# KNOBELN transcript 1: "
MOVES_MAGIC_1 = "# KNOBELN moves 1: "
# The first line of a moves form as the server stores it (no header).
STORED_MOVES_LINE = "# knobeln moves 2"
#: The server keeps at most this many lines of a transcript.
TRANSCRIPT_CAP = 200000
#: Longest line a bot may print, in bytes (without the line end).
MAX_LINE = 4096
#: Characters of an offending line a rule violation quotes.
MAX_QUOTED = 200
#: Characters of a line shown in a failure report.
SHOWN_LINE_CHARS = 200

# ---------------------------------------------------------------------------
# The game (a port of src/discipline/ultimatum/rules.rs)
# ---------------------------------------------------------------------------

POT = 1000
MAX_ROUNDS = 1000000


def validate_params(rounds):
    if not 1 <= rounds <= MAX_ROUNDS:
        return "rounds must be in 1..=%d (got %d)" % (MAX_ROUNDS, rounds)
    return None


def quote_rule(line):
    """Keeps at most MAX_QUOTED characters of a line for a report."""
    if len(line) > MAX_QUOTED:
        return line[:MAX_QUOTED] + "..."
    return line


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


class Violation:
    def __init__(self, seat, rule, line):
        self.seat = seat
        self.rule = rule
        self.line = quote_rule(line)


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


def counted(n, one, many):
    """`n` and the noun in the number `n` asks for: "1 round", "2 rounds"
    (the server's words::counted)."""
    return "1 %s" % one if n == 1 else "%d %s" % (n, many)


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


# ---------------------------------------------------------------------------
# Everything below is the same in the ultimatum and FootSteps home referees
# (a test checks it byte for byte).
# ---------------------------------------------------------------------------


def one_line(s):
    """A name or reason on one line: control characters become blanks."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in s)


def quote(line):
    """A line as written after 'to S: ' or 'S: ': control characters as
    \\xNN, a backslash doubled."""
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
    """The inverse of quote (a malformed escape is kept as written)."""
    out = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 < n and s[i + 1] == "\\":
            out.append("\\")
            i += 2
            continue
        if i + 1 < n and s[i + 1] == "x":
            hx = s[i + 2:i + 4]
            if len(hx) == 2 and all(h in "0123456789abcdefABCDEF" for h in hx):
                out.append(chr(int(hx, 16)))
                i += 4
                continue
        out.append("\\")
        i += 1
    return "".join(out)


def escape_default(c):
    """Rust's char::escape_default, for the failure reports."""
    table = {"\t": "\\t", "\r": "\\r", "\n": "\\n", "'": "\\'", '"': '\\"', "\\": "\\\\"}
    if c in table:
        return table[c]
    o = ord(c)
    if 0x20 <= o <= 0x7E:
        return c
    return "\\u{%x}" % o


def show_line(line):
    """A line as shown in a failure report: control characters escaped, at
    most 200 characters after escaping."""
    out = []
    n = 0
    for c in line:
        shown = escape_default(c) if unicodedata.category(c) == "Cc" else c
        if n + len(shown) > SHOWN_LINE_CHARS:
            out.append("\u2026")
            break
        n += len(shown)
        out.append(shown)
    return "".join(out)


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


def fmt_secs(secs):
    """Seconds as the server writes them ({} of an f64: 10, 2.5)."""
    s = repr(float(secs))
    return s[:-2] if s.endswith(".0") else s


class Failure:
    """A seat's failure: a broken rule (rule=True) or outside the rules."""

    def __init__(self, seat, reason, rule=False):
        self.seat = seat
        self.reason = reason
        self.rule = rule


def describe(seat, turn, what, line=None):
    reason = "player %d, turn %d: %s" % (seat + 1, turn, what)
    if line is not None:
        reason += '; its line: "%s"' % show_line(line)
    return reason



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
    """The game with its transcript, as the server's Recorded: lines sent
    are noted when the game hands them out (before they are sent), the
    farewell once, and every line a seat printed before the game judges it."""

    def __init__(self, game):
        self.game = game
        self.transcript = []  # (seat, "to" | "from", line)
        self.farewell_noted = False

    def next(self):
        step = self.game.next()
        if step[0] == "send":
            for line in step[2]:
                self.transcript.append((step[1], "to", line))
        elif step[0] == "over" and not self.farewell_noted:
            self.farewell_noted = True
            for seat, lines in step[1]:
                for line in lines:
                    self.transcript.append((seat, "to", line))
        return step

    def reply(self, seat, line):
        violation = self.game.reply(seat, line)
        self.transcript.append((seat, "from", kept_line(line, violation)))
        return violation


class Stop(Exception):
    """A seat failed outside the rules (or the moves ran out)."""

    def __init__(self, failures):
        Exception.__init__(self)
        self.failures = failures


def drive(rec, seats):
    """Plays the recorded game on the seats to its end, as the server's
    lines::game::play_game_on: the failures (a broken rule is one too); the
    game is told of the failures outside the rules (it forfeits)."""
    failures = []
    try:
        while True:
            step = rec.next()
            if step[0] == "send":
                seats.send(step[1], step[2])
            elif step[0] == "expect":
                seat = step[1]
                seats.turn = rec.game.turn()
                line = seats.receive(seat)
                v = rec.reply(seat, line)
                if v is not None:
                    failures.append(
                        Failure(v.seat, describe(v.seat, seats.turn, "broke a rule: " + v.rule, v.line), True)
                    )
                    step = rec.next()
                    if step[0] == "over":
                        for s, lines in step[1]:
                            seats.send_quietly(s, lines)
                    break
            else:
                for s, lines in step[1]:
                    seats.send_quietly(s, lines)
                break
    except Stop as stop:
        failures = stop.failures
    for f in failures:
        if not f.rule:
            rec.game.forfeit(f.seat)
    return failures


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


class Bots:
    """The seats as processes on this machine."""

    def __init__(self, commands, reply_secs, quiet, match_secs):
        self.reply_secs = reply_secs
        self.match_secs = match_secs
        self.turn = 0
        self.procs = []
        self.bufs = []
        self.eof = []
        self.dead = []
        self.answered = []
        self.settled = []
        # The wall clock each bot has been waited for in this match, in
        # seconds: from the moment its line is asked for until it is
        # complete (start-up and answers; not the settling after one).
        self.waited = []
        for i, cmd in enumerate(commands):
            args = shlex.split(cmd)
            if not args:
                raise OSError("bot %d: an empty command" % i)
            try:
                p = subprocess.Popen(
                    args,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL if quiet else None,
                    bufsize=0,
                    start_new_session=True,
                )
            except OSError as e:
                self.close()
                raise OSError("bot %d (%s) cannot be started: %s" % (i, cmd, e))
            os.set_blocking(p.stdin.fileno(), False)
            self.procs.append(p)
            self.bufs.append(bytearray())
            self.eof.append(False)
            self.dead.append(False)
            self.answered.append(False)
            self.settled.append(False)
            self.waited.append(0.0)

    def _kill(self, seat):
        p = self.procs[seat]
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                try:
                    p.kill()
                except OSError:
                    pass
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.dead[seat] = True

    def _fail(self, seat, what, line=None, kill=True):
        if kill:
            self._kill(seat)
        return Stop([Failure(seat, describe(seat, self.turn, what, line))])

    def _ended(self, seat):
        """The failure of a bot whose output closed or whose input broke."""
        p = self.procs[seat]
        try:
            code = p.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            what = "closed its standard output before the game was over"
        elif code < 0:
            what = "crashed (%s)" % signal_name(-code)
        else:
            what = "ended before the game was over (exit status %d)" % code
        return self._fail(seat, what)

    def send(self, seat, lines):
        self.settle(seat)
        self.write(seat, lines)

    def settle(self, seat):
        """Before new lines after an answer: the bot may have printed
        nothing since (the server's Match::settle). Waits until it has come
        to rest (at most --reply-secs)."""
        if not self.answered[seat] or self.settled[seat] or self.eof[seat]:
            return
        deadline = time.monotonic() + self.reply_secs
        while True:
            rest = at_rest(self.procs[seat].pid)
            self._read(seat, 0)
            got = self._take_line(seat)
            if isinstance(got, Stop):
                raise got
            if got is not None:
                raise self._fail(seat, UNASKED, got)
            if rest or self.eof[seat] or time.monotonic() >= deadline:
                break
            time.sleep(0.0002)
        self.settled[seat] = True

    def write(self, seat, lines):
        # One write for the lines of a step (the server writes them one by
        # one, but a bot in its sandbox ends more slowly than here).
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        fd = self.procs[seat].stdin.fileno()
        deadline = None
        while data:
            try:
                n = os.write(fd, data)
                data = data[n:]
                continue
            except BlockingIOError:
                pass
            except BrokenPipeError:
                raise self._ended(seat)
            now = time.monotonic()
            if deadline is None:
                deadline = now + self.reply_secs
            if now >= deadline:
                raise self._fail(seat, "stopped reading the referee's lines")
            select.select([], [fd], [], deadline - now)

    def send_quietly(self, seat, lines):
        if self.dead[seat]:
            return
        try:
            self.write(seat, lines)
        except Stop:
            pass

    def _take_line(self, seat):
        """A complete line from the buffer: the line, a Stop, or None."""
        buf = self.bufs[seat]
        i = buf.find(b"\n")
        if i < 0:
            if len(buf) > MAX_LINE:
                shown = bytes(buf[:400]).decode("utf-8", "replace")
                return self._fail(seat, "sent a line longer than %d bytes" % MAX_LINE, shown)
            return None
        raw = bytes(buf[:i])
        del buf[:i + 1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > MAX_LINE:
            shown = raw[:400].decode("utf-8", "replace")
            return self._fail(seat, "sent a line longer than %d bytes" % MAX_LINE, shown)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return self._fail(seat, "sent a line that is not UTF-8 text", raw.decode("utf-8", "replace"))

    def receive(self, seat):
        since = time.monotonic()
        deadline = since + self.reply_secs
        # Where this bot's waiting in all would pass --match-secs (the
        # server's LineLimits::waited).
        out = since + max(0.0, self.match_secs - self.waited[seat])
        while True:
            got = self._take_line(seat)
            if isinstance(got, Stop):
                raise got
            if got is not None:
                self.waited[seat] += time.monotonic() - since
                self.answered[seat] = True
                self.settled[seat] = False
                return got
            if self.eof[seat]:
                raise self._ended(seat)
            now = time.monotonic()
            if now >= out:
                raise self._fail(seat, WAITED % fmt_secs(self.match_secs))
            if now >= deadline:
                partial = None
                if self.bufs[seat]:
                    partial = bytes(self.bufs[seat]).decode("utf-8", "replace")
                raise self._fail(
                    seat,
                    "gave no answer within %s s of wall clock (blocked or sleeping, or its "
                    "answer is still in its output buffer: flush standard output after every "
                    "line)" % fmt_secs(self.reply_secs),
                    partial,
                )
            self._read(seat, min(deadline, out) - now)

    def _read(self, seat, wait):
        """Reads what the bot printed, waiting at most `wait` seconds for it."""
        fd = self.procs[seat].stdout.fileno()
        r, _, _ = select.select([fd], [], [], wait)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if chunk:
                self.bufs[seat].extend(chunk)
            else:
                self.eof[seat] = True

    def close(self):
        """Ends every bot: its input is closed, and what still runs after a
        moment is killed (the server kills at once)."""
        for p in self.procs:
            try:
                p.stdin.close()
            except OSError:
                pass
        end = time.monotonic() + 0.5
        for i, p in enumerate(self.procs):
            try:
                p.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            self._kill(i)
            try:
                p.stdout.close()
            except OSError:
                pass


#: Failures found only while waiting for a line (the bot was still there
#: for every line sent to it before); any other failure outside the rules
#: (a bot that ended, crashed, stopped reading) can also be found when a
#: line is sent to it.
RECEIVE_ONLY = (
    "gave no answer",
    "computed more than",
    "sent a ",
    "was still thinking",
    "was waited for more than",
)


def failure_turn(reason):
    """The turn of a failure report ("player 2, turn 17: ..."), or None."""
    head = reason.split(":", 1)[0]
    if ", turn " in head:
        t = head.rsplit(", turn ", 1)[1].strip()
        if t.isdigit() and t.isascii():
            return int(t)
    return None


class Replay:
    """The seats as a moves record: each line a seat is asked for is the
    next move. When the moves have run out, the game stops at the next
    line asked for (with a "= N" line, the transcript is then cut to its
    first N lines, as the server's expand does). A moves form without
    "= N" (written before it existed) stops before that where the server's
    referee found the failure while sending: at a line sent to a seat that
    failed by ending (its input was closed), in the turn its "!" line names
    (the referee attributes a failure to the turn of the last line it
    asked for)."""

    def __init__(self, moves, forfeits, ends_after=None):
        self.moves = moves
        self.next_move = 0
        self.forfeits = forfeits
        self.ends_after = ends_after
        self.turn = 0
        self.damaged = None

    def _stop(self, seat):
        first = [Failure(s, r) for s, r in self.forfeits if s == seat]
        rest = [Failure(s, r) for s, r in self.forfeits if s != seat]
        return Stop(first + rest)

    def send(self, seat, lines):
        if self.next_move < len(self.moves) or self.ends_after is not None:
            return
        for s, reason in self.forfeits:
            if s != seat or any(k in reason for k in RECEIVE_ONLY):
                continue
            t = failure_turn(reason)
            if t is None or t == self.turn:
                raise self._stop(seat)

    def send_quietly(self, seat, lines):
        pass

    def receive(self, seat):
        if self.next_move >= len(self.moves):
            if not self.forfeits:
                self.damaged = "the moves end before the game does (and no seat failed)"
            raise self._stop(seat)
        s, line = self.moves[self.next_move]
        if s != seat:
            self.damaged = "move %d is player %d's, but the game asks player %d for its line" % (
                self.next_move + 1,
                s + 1,
                seat + 1,
            )
            raise Stop([])
        self.next_move += 1
        return line


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------


def header(magic, params, names, game=None):
    lines = [magic + DISCIPLINE]
    if game is not None:
        lines.append("# game: " + one_line(game))
    lines += ["# " + p for p in params]
    lines += ["# player %d: %s" % (i + 1, one_line(n)) for i, n in enumerate(names)]
    return lines


def full_text(params, names, transcript, failures, summary, notes=(), game=None):
    out = header(FULL_MAGIC, params, names, game)
    for seat, said, line in transcript:
        out.append("%s %d: %s" % (said, seat + 1, quote(line)))
    for f in failures:
        out.append("# failure: player %d: %s" % (f.seat + 1, one_line(f.reason)))
    for s in summary:
        out.append("# result: " + one_line(s))
    for n in notes:
        out.append("# " + one_line(n))
    return "\n".join(out) + "\n"


def moves_text(params, names, transcript, failures):
    out = header(MOVES_MAGIC, params, names)
    for seat, said, line in transcript:
        if said == "from":
            out.append("%d: %s" % (seat + 1, quote(line)))
    forfeits = [f for f in failures if not f.rule]
    for f in forfeits:
        out.append("! %d: %s" % (f.seat + 1, one_line(f.reason)))
    if forfeits:
        # Where the game stopped: a failure noticed at a write to a bot
        # that quit is not told by the rules.
        out.append("= %d" % len(transcript))
    return "\n".join(out) + "\n"


def write_text(path, text):
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


class BadMoves(Exception):
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
    """(header values, names, moves, forfeits, ends_after) of a moves text;
    ends_after is the N of a last line "= N" (how many lines the transcript
    had), else None. Players are numbered from 1 (format 2); a text of
    format 1 (first line "# KNOBELN moves 1: ") numbers them from 0. The
    seats returned count from 0."""
    values = {}
    names = {}
    moves = []
    forfeits = []
    ends_after = None
    lines = text.split("\n")
    first = lines[0].rstrip("\r") if lines else ""
    lowest = 1 if first.startswith(MOVES_MAGIC) or first == STORED_MOVES_LINE else 0
    word = "player" if lowest else "seat"
    for no, raw in enumerate(lines, 1):
        if raw.endswith("\r"):
            raw = raw[:-1]
        if no == 1 and raw.lower().startswith("# knobeln "):
            if raw.startswith(FULL_MAGIC) or raw.startswith(FULL_MAGIC_1):
                raise BadMoves("line 1: this is a full transcript; --expand reads the moves form")
            if raw == STORED_MOVES_LINE:
                continue
            magic = MOVES_MAGIC if lowest else MOVES_MAGIC_1
            if not raw.startswith(magic):
                raise BadMoves("line 1: not a moves form (%s...)" % MOVES_MAGIC)
            d = raw[len(magic):].strip()
            if d != DISCIPLINE:
                raise BadMoves("line 1: moves of %s, but this is the %s referee" % (d, DISCIPLINE))
            continue
        if raw.startswith("#"):
            body = raw[1:].strip()
            if body.startswith(word + " ") and ":" in body:
                k, v = body[len(word) + 1:].split(":", 1)
                if k.strip().isdigit() and int(k) >= lowest:
                    names[int(k) - lowest] = v[1:] if v.startswith(" ") else v
                    continue
            if ":" in body:
                k, v = body.split(":", 1)
                values[k.strip()] = v.strip()
            continue
        if raw == "":
            continue
        if ends_after is not None:
            raise BadMoves("line %d: nothing follows `= N`" % no)
        if raw.startswith("= "):
            n = raw[2:]
            if not n.isdigit() or not n.isascii():
                raise BadMoves("line %d: `= N`: a number of lines" % no)
            ends_after = int(n)
            continue
        bang = raw.startswith("! ")
        rest = raw[2:] if bang else raw
        if ": " in rest:
            seat, line = rest.split(": ", 1)
        elif rest.endswith(":"):
            seat, line = rest[:-1], ""
        else:
            raise BadMoves("line %d: expected `%s: LINE`" % (no, word.upper()))
        if not seat.isdigit() or not seat.isascii():
            raise BadMoves("line %d: a %s number first" % (no, word))
        seat = int(seat)
        highest = Game.n_seats + lowest - 1
        if not lowest <= seat <= highest:
            raise BadMoves("line %d: %s %d, but the %ss are %d to %d" % (no, word, seat, word, lowest, highest))
        seat -= lowest
        if bang:
            forfeits.append((seat, line))
        else:
            if forfeits:
                raise BadMoves("line %d: a move after a failure" % no)
            moves.append((seat, unquote(line)))
    return values, names, moves, forfeits, ends_after


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def default_name(cmd):
    try:
        args = shlex.split(cmd)
    except ValueError:
        args = cmd.split()
    if not args:
        return cmd
    base = os.path.basename(args[-1]) or args[-1]
    stem = base.rsplit(".", 1)[0] if "." in base[1:] else base
    return stem or base


def usage_error(msg):
    sys.stderr.write("referee.py: %s\n" % msg)
    sys.exit(2)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="referee.py",
        description="Home referee of KNOBELN's %s: plays two bots as the server does." % DISCIPLINE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="See the top of this file for the formats.",
    )
    add_params(ap)
    ap.add_argument("--transcript", metavar="FILE", help="full transcript to FILE (default: standard output)")
    ap.add_argument("--moves", metavar="FILE", help="moves form to FILE")
    ap.add_argument("--reply-secs", type=float, default=10.0, metavar="S", help="wall clock per line (10)")
    ap.add_argument(
        "--match-secs",
        type=float,
        default=float(DEFAULT_MATCH_SECS),
        metavar="S",
        help="wall clock a bot may be waited for in all, its start-up and its lines "
        "together (%s, the server's)" % fmt_secs(DEFAULT_MATCH_SECS),
    )
    ap.add_argument("--name0", metavar="N")
    ap.add_argument("--name1", metavar="N")
    ap.add_argument("--quiet-bots", action="store_true", help="discard the bots' standard error")
    ap.add_argument("--expand", metavar="MOVES_FILE", help="write the full transcript of a moves form")
    ap.add_argument("bots", nargs="*", metavar="'BOT COMMAND'")
    args = ap.parse_args(argv)

    if args.expand is not None:
        if args.bots:
            usage_error("--expand replays a moves form: no bot commands")
        try:
            with open(args.expand, encoding="utf-8", newline="") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            usage_error("cannot read %s: %s" % (args.expand, e))
        # A mailed file holds one game after the other: each is expanded,
        # the full transcripts follow each other in the same order.
        games = split_games(text)
        out = []
        damaged = False
        for k, one in enumerate(games, 1):
            try:
                values, names, moves, forfeits, ends_after = parse_moves(one)
            except BadMoves as e:
                where = args.expand if len(games) == 1 else "%s, game %d" % (args.expand, k)
                usage_error("%s: %s" % (where, e))
            make_game, hparams = params_from(args, values)
            names = [
                args.name0 if args.name0 is not None else names.get(0, "player 1"),
                args.name1 if args.name1 is not None else names.get(1, "player 2"),
            ]
            game = make_game()
            rec = Recorded(game)
            seats = Replay(moves, forfeits, ends_after)
            failures = drive(rec, seats)
            if ends_after is not None:
                # Where the game stopped: the bot that quit was noticed there.
                del rec.transcript[ends_after:]
            if not failures and not seats.damaged:
                # Failures after a finished game (the server's last CPU check)
                # change nothing, but are reported.
                failures = [Failure(s, r) for s, r in forfeits]
                for f in failures:
                    game.forfeit(f.seat)
            notes = []
            if seats.damaged:
                damaged = True
                notes.append("the moves do not fit the game: " + seats.damaged)
            elif seats.next_move < len(moves):
                notes.append("%d moves after the end of the game were left out" % (len(moves) - seats.next_move))
            summary = game.summary(names)
            name = values.get("game")
            out.append(full_text(hparams, names, rec.transcript, failures, summary, notes, name))
            if len(games) > 1:
                sys.stderr.write("game %d of %d%s:\n" % (k, len(games), ", " + name if name else ""))
            for s in summary:
                sys.stderr.write(s + "\n")
            for f in failures:
                sys.stderr.write("FAILURE of %s: %s\n" % (names[f.seat], f.reason))
            for n in notes:
                sys.stderr.write("referee.py: %s\n" % n)
        write_text(args.transcript, "".join(out))
        return 1 if damaged else 0

    if len(args.bots) != 2:
        usage_error("give two bot commands (player 1 first), or --expand MOVES_FILE")
    if not args.reply_secs > 0:
        usage_error("--reply-secs must be positive")
    if not args.match_secs > 0:
        usage_error("--match-secs must be positive")
    make_game, hparams = params_from(args, {})
    names = [
        args.name0 if args.name0 is not None else default_name(args.bots[0]),
        args.name1 if args.name1 is not None else default_name(args.bots[1]),
    ]
    started = time.monotonic()
    try:
        seats = Bots(args.bots, args.reply_secs, args.quiet_bots, args.match_secs)
    except (OSError, ValueError) as e:
        usage_error(str(e))
    game = make_game()
    rec = Recorded(game)
    try:
        failures = drive(rec, seats)
    finally:
        seats.close()
    wall_ms = int((time.monotonic() - started) * 1000)
    summary = game.summary(names)
    write_text(args.transcript, full_text(hparams, names, rec.transcript, failures, summary))
    if args.moves:
        write_text(args.moves, moves_text(hparams, names, rec.transcript, failures))
    for s in summary:
        sys.stderr.write(s + "\n")
    sys.stderr.write("wall clock: %d ms\n" % wall_ms)
    for f in failures:
        sys.stderr.write("FAILURE of %s: %s\n" % (names[f.seat], f.reason))
    if len(rec.transcript) > TRANSCRIPT_CAP:
        sys.stderr.write(
            "note: %d lines; the server keeps only the first %d of a transcript\n"
            % (len(rec.transcript), TRANSCRIPT_CAP)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
