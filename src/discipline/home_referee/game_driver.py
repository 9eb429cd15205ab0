# ---------------------------------------------------------------------------
# The driver of the flooding island and Morabaraba home referees
# (src/discipline/home_referee/game_driver.py): Rust-like text helpers, the
# transcript, the bots as processes, driving and replaying a game, the two
# text forms and the command line. The kit joins it into each of the two
# disciplines' referee.py after the discipline's part and shared.py. It
# knows no rule: it defines the Violation a game returns for a broken rule,
# and calls what the discipline's part defines: DISCIPLINE, N_SEATS,
# DEFAULT_MATCH_SECS, PARSER_DESCRIPTION, THE_BOT, new_game(setup) (the
# game: next, reply, forfeit, turn, summary), params_lines(*setup),
# setup_of_header(head), add_game_options(parser), add_name_options(parser),
# check_play_args(args), play_setup(args) and heading_lines(setup).


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


def one_line(s):
    return "".join(" " if is_control(c) else
                   ("\\u{%x}" % ord(c) if ord(c) in BIDI else c) for c in s)


# ---------------------------------------------------------------------------
# A broken rule, as the game reports it (its line as printed).

class Violation:
    def __init__(self, seat, rule, line):
        self.seat = seat
        self.rule = rule
        self.line = line


# ---------------------------------------------------------------------------
# The transcript (src/game/lines.rs: Recorded).

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
        # The turn of its last answer: where a failure found before its
        # next lines is (the server's answered_turn).
        self.answered_turn = 0
        self.settled = False
        self.reply_secs = 10.0
        self.match_secs = float(DEFAULT_MATCH_SECS)
        # The wall clock this bot has been waited for in this game, in
        # seconds: from the moment its line is asked for until it is
        # complete, and after an answer until it is back at its input
        # (start-up, answers and settling).
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
        to rest: a bot that does not within --reply-secs fails, and the
        wait counts toward its waiting in all (--match-secs)."""
        if not self.answered or self.settled or self.eof or self.dead:
            return
        since = time.monotonic()
        deadline = since + self.reply_secs
        out = since + max(0.0, self.match_secs - self.waited)
        failure = None
        while True:
            rest = at_rest(self.pid)
            # A bad line here is in the turn of the answer too.
            line = self.take_line(self.answered_turn)
            if line is not None:
                failure = Failure(self.seat, self.answered_turn, UNASKED, line)
                break
            if rest or self.eof:
                break
            now = time.monotonic()
            if now >= out:
                failure = Failure(self.seat, self.answered_turn,
                                  WAITED % secs(int(round(self.match_secs * 1000))))
                break
            if now >= deadline:
                failure = Failure(self.seat, self.answered_turn,
                                  AWAKE % secs(int(self.reply_secs * 1000)))
                break
            time.sleep(0.0002)
        self.waited += time.monotonic() - since
        if failure is not None:
            self.kill()
            raise failure
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

    def take_line(self, turn=None):
        """A complete line from the buffer, reading what is there first;
        None when there is none yet (or the output closed). A bad line
        fails in `turn` (by default the current one)."""
        if turn is None:
            turn = self.turn
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
                    raise Failure(self.seat, turn,
                                  "sent a line longer than %d bytes" % MAX_LINE, shown)
                try:
                    return raw.decode("utf-8")
                except UnicodeDecodeError:
                    self.kill()
                    raise Failure(self.seat, turn, "sent a line that is not UTF-8 text",
                                  raw.decode("utf-8", "replace"))
            if len(self.buf) > MAX_LINE:
                shown = bytes(self.buf[:400]).decode("utf-8", "replace")
                self.kill()
                raise Failure(self.seat, turn,
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
                self.answered_turn = self.turn
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


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8")


# ---------------------------------------------------------------------------
# Command line.

def build_parser():
    p = argparse.ArgumentParser(prog="referee.py", description=PARSER_DESCRIPTION)
    add_game_options(p)
    p.add_argument("--transcript", metavar="FILE",
                   help="write the full transcript there (default: standard output)")
    p.add_argument("--moves", metavar="FILE", help="also write the moves form there")
    p.add_argument("--reply-secs", type=float, default=10.0,
                   help="wall-clock seconds per line of %s (default 10)" % THE_BOT)
    p.add_argument("--match-secs", type=float, default=float(DEFAULT_MATCH_SECS),
                   help="wall-clock seconds %s may be waited for in all in the game, "
                        "its start-up and its lines together (default %d, the "
                        "server's)" % (THE_BOT, DEFAULT_MATCH_SECS))
    add_name_options(p)
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
    write_text(args.transcript, "".join(fulls))
    if args.moves:
        write_text(args.moves, "".join(moves_out))
    return 0


def play_main(args):
    check_play_args(args)
    if not args.reply_secs > 0:
        raise UsageError("--reply-secs must be positive")
    if not args.match_secs > 0:
        raise UsageError("--match-secs must be positive")
    setup = play_setup(args)
    given = [getattr(args, "name%d" % i, None) for i in range(N_SEATS)]
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
    for line in heading_lines(setup):
        print(line, file=sys.stderr)
    results = game.summary(names)
    params = params_lines(*setup)
    fails = [(f.seat, f.reason) for f in failures]
    forfeits = [(f.seat, f.reason) for f in failures if not f.rule]
    write_text(args.transcript, full_text(params, names, rec.transcript, fails, results))
    if args.moves:
        write_text(args.moves, moves_text(params, names, rec.transcript, forfeits))
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
