# ---------------------------------------------------------------------------
# The driver of the ultimatum and FootSteps home referees
# (src/discipline/home_referee/match_driver.py): running the bots with their
# limits, refereeing a match, replaying a moves form, the transcript files
# and the command line. The kit joins it into each of the two disciplines'
# referee.py after the discipline's part and shared.py. It knows no rule: it
# defines the Violation a game returns for a broken rule, and calls what the
# discipline's part defines: DISCIPLINE, Game (its n_seats, next, reply,
# forfeit, turn, summary), DEFAULT_MATCH_SECS, add_params(ap) and
# params_from(args, values).
# ---------------------------------------------------------------------------

# The first line of a moves form as the server stores it (no header).
STORED_MOVES_LINE = "# knobeln moves 2"


#: Characters of an offending line a rule violation quotes.
MAX_QUOTED = 200


def quote_rule(line):
    """Keeps at most MAX_QUOTED characters of a line for a report."""
    if len(line) > MAX_QUOTED:
        return line[:MAX_QUOTED] + "..."
    return line


class Violation:
    def __init__(self, seat, rule, line):
        self.seat = seat
        self.rule = rule
        self.line = quote_rule(line)


def one_line(s):
    """A name or reason on one line: control characters become blanks, a
    bidi mark, override or isolate \\u{202e} (as quote writes it)."""
    return "".join(" " if unicodedata.category(c) == "Cc" else
                   ("\\u{%x}" % ord(c) if ord(c) in BIDI else c) for c in s)


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
        # The turn of each bot's last answer: where a failure found before
        # its next lines is (the server's answered_turn).
        self.answered_turn = []
        self.settled = []
        # The wall clock each bot has been waited for in this match, in
        # seconds: from the moment its line is asked for until it is
        # complete, and after an answer until it is back at its input
        # (start-up, answers and settling).
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
            self.answered_turn.append(0)
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

    def _fail(self, seat, what, line=None, kill=True, turn=None):
        if kill:
            self._kill(seat)
        if turn is None:
            turn = self.turn
        return Stop([Failure(seat, describe(seat, turn, what, line))])

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
        to rest: a bot that does not within --reply-secs fails, and the
        wait counts toward its waiting in all (--match-secs)."""
        if not self.answered[seat] or self.settled[seat] or self.eof[seat]:
            return
        since = time.monotonic()
        deadline = since + self.reply_secs
        out = since + max(0.0, self.match_secs - self.waited[seat])
        try:
            while True:
                rest = at_rest(self.procs[seat].pid)
                self._read(seat, 0)
                # A bad line here is in the turn of the answer too.
                turn = self.answered_turn[seat]
                got = self._take_line(seat, turn)
                if isinstance(got, Stop):
                    raise got
                if got is not None:
                    raise self._fail(seat, UNASKED, got, turn=turn)
                if rest or self.eof[seat]:
                    break
                now = time.monotonic()
                if now >= out:
                    raise self._fail(seat, WAITED % fmt_secs(self.match_secs), turn=turn)
                if now >= deadline:
                    raise self._fail(seat, AWAKE % fmt_secs(self.reply_secs), turn=turn)
                time.sleep(0.0002)
        finally:
            self.waited[seat] += time.monotonic() - since
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

    def _take_line(self, seat, turn=None):
        """A complete line from the buffer: the line, a Stop (in `turn`,
        by default the current one), or None."""
        buf = self.bufs[seat]
        i = buf.find(b"\n")
        if i < 0:
            if len(buf) > MAX_LINE:
                shown = bytes(buf[:400]).decode("utf-8", "replace")
                return self._fail(seat, "sent a line longer than %d bytes" % MAX_LINE, shown, turn=turn)
            return None
        raw = bytes(buf[:i])
        del buf[:i + 1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > MAX_LINE:
            shown = raw[:400].decode("utf-8", "replace")
            return self._fail(seat, "sent a line longer than %d bytes" % MAX_LINE, shown, turn=turn)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return self._fail(seat, "sent a line that is not UTF-8 text", raw.decode("utf-8", "replace"), turn=turn)

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
                self.answered_turn[seat] = self.turn
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


class BadMoves(Exception):
    pass


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
