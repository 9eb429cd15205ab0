# ---------------------------------------------------------------------------
# What the four home referees share (src/discipline/home_referee/shared.py):
# the transcript formats' first lines, quoting a line, what a transcript keeps
# of a line, the look for lines nobody asked for, the waiting budget's words
# writing a file and counting a noun. The kit joins it into each discipline's one referee.py
# after the discipline's own part and before its driver; it holds no rule of
# any game and starts no bot.
# ---------------------------------------------------------------------------

FULL_MAGIC = "# knobeln transcript 2: "
MOVES_MAGIC = "# knobeln moves 2: "
# Format 1 (players numbered from 0 as seats): read by --expand, not written.
FULL_MAGIC_1 = "# KNOBELN transcript 1: "
MOVES_MAGIC_1 = "# KNOBELN moves 1: "
#: The server keeps at most this many lines of a transcript.
TRANSCRIPT_CAP = 200000
#: Longest line a bot may print, in bytes (without the line end).
MAX_LINE = 4096
#: Characters of a line shown in a failure report.
SHOWN_LINE_CHARS = 200


def quote(line):
    """A line as written after 'to S: ' or 'S: ': control characters (C0,
    DEL, C1) as \\xNN, a bidi mark, override or isolate as \\u{202e}, a
    backslash doubled (the server's quote, character for character)."""
    out = []
    for c in line:
        o = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif o < 0x20 or 0x7F <= o <= 0x9F:
            out.append("\\x%02x" % o)
        elif o in BIDI:
            out.append("\\u{%x}" % o)
        else:
            out.append(c)
    return "".join(out)


#: The bidi marks, embeddings, overrides and isolates, the zero-width
#: space, word joiner and byte order mark, the line and paragraph
#: separators: what quote writes by number (the server's `draw::hides`
#: beyond the control characters).
BIDI = frozenset([0x061C, 0x200B, 0x200E, 0x200F, 0x2060, 0xFEFF]
                 + list(range(0x2028, 0x202F))
                 + list(range(0x2066, 0x206A)))


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


#: The failure of a line printed when none was asked for (the server's
#: words). A bot is looked at before it is sent new lines after its answer.
UNASKED = ("printed a line nobody asked for (after its answer, before the referee's "
           "next lines): print exactly the lines the protocol asks for, one answer "
           "per request")

#: The failure of a bot that did not come to rest after its answer within
#: --reply-secs (the server's words, with the seconds for %s; the server
#: bounds this wait by the bot's CPU time too, which the kit does not
#: measure).
AWAKE = ("did not come back to read the referee's next lines within %s s of wall "
         "clock after its answer (it slept, or kept running, instead of reading its "
         "input)")

#: The failure of a bot the referee waited for longer in all than a match
#: allows (--match-secs; the server's words, with the seconds for %s).
WAITED = ("was waited for more than %s s of wall clock in all in this match (its "
          "start-up, its answers and its returns to its input after them, together; "
          "each bot has that much per match): a bot that sleeps or blocks instead of "
          "answering is stopped there")

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


def split_games(text):
    """The games of a moves text, each from its first line: a mailed file
    holds one game after the other."""
    games = []
    for raw in text.split("\n"):
        if raw.startswith(MOVES_MAGIC) or raw.startswith(MOVES_MAGIC_1) or not games:
            games.append([])
        games[-1].append(raw)
    return ["\n".join(g) for g in games]


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
        if s[i + 1:i + 3] == "u{":
            end = s.find("}", i + 3, i + 10)
            hx = s[i + 3:end] if end >= 0 else ""
            if 1 <= len(hx) <= 6 and all(h in "0123456789abcdefABCDEF" for h in hx):
                o = int(hx, 16)
                if o <= 0x10FFFF and not 0xD800 <= o <= 0xDFFF:
                    out.append(chr(o))
                    i = end + 1
                    continue
        out.append("\\")
        i += 1
    return "".join(out)


def write_text(path, text):
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def counted(n, one, many):
    """`n` and the noun in the number `n` asks for: "1 round", "2 rounds"
    (the server's words::counted)."""
    return "1 %s" % one if n == 1 else "%d %s" % (n, many)


