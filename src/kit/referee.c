/*
 * referee.c -- a local KNOBELN referee (participant kit).
 *
 * Plays one game between two strategy executables exactly as the contest's
 * referee does: the same player seeds for a given game seed, the same rules
 * (range a..b, series of at least k, L throws), the same limits (CPU time
 * and memory per strategy with setrlimit, a wall-clock limit for the whole
 * game), the same failures (bad output, early exit, crash, forbidden system
 * call) with the same sentences, and prints the game protocol in the
 * compact format of the contest's DGP mails -- or, with -v, in the full
 * format (the same text as protocolfmt prints for it).
 *
 *   gcc -O2 -o referee referee.c
 *   ./referee [-s seed] [-L 1000] [-k 8] [-a 1] [-b 12288] [-v]
 *             [-t cpu_secs] [-m memory_kb] [-w wall_secs] [-p name] [-q name]
 *             strategyA strategyB
 *
 * strategyA plays P, strategyB plays Q (they may be the same file). Build
 * strategies with the command in the README. Without -s the game seed comes
 * from the clock; the protocol shows it, so any game can be replayed.
 * Exit status: 0 when the game was played to the end, 1 when a strategy
 * failed (the protocol says which, in which throw, and why), 2 on a usage
 * or system error.
 *
 * Plain C99 with POSIX (fork, exec, pipes, poll, setrlimit); on Linux a
 * strategy also dies with the referee.
 */

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/personality.h>
#include <sys/prctl.h>
#endif

/* ==== shared part: begin (identical in referee.c and protocolfmt.c) ==== */

/*
 * The compact protocol and the full format, as in the server's
 * src/protocol.rs (see README, "The game protocol"). Strings are counted
 * (struct str), since a team name or a reason may hold any byte.
 */

typedef long long i64;
typedef unsigned long long u64;

#define PROTO_VERSION 1
#define PROTO_BEGIN "KNOBELN-PROTOCOL"
#define PROTO_END "KNOBELN-END"
#define PROTO_WIDTH 72
#define PROTO_MAX_THROWS 1000000ULL

struct str {
    char *s;
    size_t n;
};

struct failure {
    u64 player; /* 0 = P, 1 = Q */
    unsigned throw_no;
    struct str reason;
};

struct proto {
    unsigned version;
    struct str players[2];
    unsigned round, group, slot, attempt;
    u64 seed;
    i64 a, b;
    unsigned k, l;
    u64 points[2];
    i64 (*throws)[2];
    size_t nthrows, cap;
    struct failure *failures;
    size_t nfailures;
};

static const char *progname = "knobeln";

static void die(const char *what)
{
    fprintf(stderr, "%s: %s\n", progname, what);
    exit(2);
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* A growing byte buffer. */
struct buf {
    char *s;
    size_t n, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void buf_str(struct buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static void buf_printf(struct buf *b, const char *fmt, ...)
{
    char tmp[512];
    int n;
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        die("internal error: line too long");
    buf_add(b, tmp, (size_t)n);
}

static void proto_push_throw(struct proto *p, i64 x, i64 y)
{
    if (p->nthrows == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 1024;
        p->throws = xrealloc(p->throws, p->cap * sizeof *p->throws);
    }
    p->throws[p->nthrows][0] = x;
    p->throws[p->nthrows][1] = y;
    p->nthrows++;
}

/* CRC-32 (IEEE 802.3, as zip and gzip). */
static unsigned long crc32_of(const char *s, size_t n)
{
    unsigned long crc = 0xFFFFFFFFUL;
    size_t i;
    int j;
    for (i = 0; i < n; i++) {
        crc ^= (unsigned char)s[i];
        for (j = 0; j < 8; j++)
            crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320UL : crc >> 1;
    }
    return ~crc & 0xFFFFFFFFUL;
}

/* floor(log2(n)) for n >= 1, 0 otherwise. */
static unsigned log2_floor(i64 n)
{
    unsigned r = 0;
    if (n < 1)
        return 0;
    while (n >>= 1)
        r++;
    return r;
}

/* Rules 2-4: who wins a throw (0 nobody, 1 P, 2 Q) and with how many
   points. Any 64-bit numbers, without overflow. */
static int judge(i64 p, i64 q, unsigned *points)
{
    int p_wins;
    *points = 0;
    if (p == q)
        return 0;
    if (p > q) /* P wins if 2q >= p */
        p_wins = q > 0 && q >= p - q;
    else /* Q wins if 2p >= q */
        p_wins = !(p > 0 && p >= q - p);
    *points = log2_floor(p_wins ? p : q);
    return p_wins ? 1 : 2;
}

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), or minus the
   length of the invalid part to replace by one U+FFFD (at least 1). */
static int utf8_seq(const unsigned char *s, size_t n, unsigned long *cp)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    int len, i;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4;
    else
        return -1;
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    *cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (i = 1; i < len; i++) {
        if ((size_t)i >= n || s[i] < lo || s[i] > hi)
            return -i;
        *cp = (*cp << 6) | (s[i] & 0x3F);
        lo = 0x80;
        hi = 0xBF;
    }
    return len;
}

static void base36(struct buf *b, i64 v)
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    char tmp[16];
    int n = 0;
    u64 u = v < 0 ? 0 - (u64)v : (u64)v;
    do {
        tmp[n++] = digits[u % 36];
        u /= 36;
    } while (u);
    if (v < 0)
        buf_add(b, "-", 1);
    while (n)
        buf_add(b, &tmp[--n], 1);
}

/* Free text: bytes ! to ~ and single blanks as they are; %, =, other bytes,
   and a blank followed by a blank or ending the text, as %HH. */
static void escape_text(struct buf *e, struct str s)
{
    size_t i;
    for (i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.s[i];
        int plain;
        if (c == ' ')
            plain = i + 1 < s.n && s.s[i + 1] != ' ';
        else
            plain = c >= 0x21 && c <= 0x7E && c != '%' && c != '=';
        if (plain)
            buf_add(e, (const char *)&c, 1);
        else
            buf_printf(e, "%%%02X", c);
    }
}

/* How much of escaped text e fits on a line with room characters: up to a
   blank where possible, never splitting a %HH. */
static size_t next_piece(const char *e, size_t n, size_t room)
{
    size_t len;
    if (n <= room)
        return n;
    for (len = room; len >= 1; len--)
        if (e[len] == ' ')
            return len;
    len = room;
    if (e[len - 1] == '%')
        len -= 1;
    else if (len >= 2 && e[len - 2] == '%')
        len -= 2;
    return len ? len : 1;
}

/* "head text" and "+text" lines. */
static void push_text(struct buf *out, const char *head, struct str text)
{
    struct buf e = {0, 0, 0};
    size_t hl = strlen(head), room, k, pos = 0;
    escape_text(&e, text);
    buf_str(out, head);
    if (e.n == 0) {
        buf_add(out, "\n", 1);
        free(e.s);
        return;
    }
    room = PROTO_WIDTH > hl + 1 + 3 ? PROTO_WIDTH - hl - 1 : 3;
    k = next_piece(e.s, e.n, room);
    buf_add(out, " ", 1);
    buf_add(out, e.s, k);
    buf_add(out, "\n", 1);
    pos = k;
    while (pos < e.n) {
        k = next_piece(e.s + pos, e.n - pos, PROTO_WIDTH - 1);
        buf_add(out, "+", 1);
        buf_add(out, e.s + pos, k);
        buf_add(out, "\n", 1);
        pos += k;
    }
    free(e.s);
}

static void player_token(char *t, size_t size, u64 player)
{
    if (player < 2)
        snprintf(t, size, "%s", player ? "Q" : "P");
    else
        snprintf(t, size, "%llu", player);
}

/* The compact protocol, exactly as the server's protocol::encode. */
static void encode(struct buf *out, const struct proto *p)
{
    struct buf line = {0, 0, 0}, tok = {0, 0, 0};
    size_t i = 0, j, n, start = out->n;
    char head[64], who[32];
    buf_printf(out, "%s %u\n", PROTO_BEGIN, p->version);
    push_text(out, "team P", p->players[0]);
    push_text(out, "team Q", p->players[1]);
    buf_printf(out, "round %u group %u slot %u attempt %u\n", p->round, p->group, p->slot,
               p->attempt);
    buf_printf(out, "seed %llu\n", p->seed);
    buf_printf(out, "a %lld b %lld k %u L %u\n", p->a, p->b, p->k, p->l);
    buf_printf(out, "points P %llu Q %llu\n", p->points[0], p->points[1]);
    for (j = 0; j < p->nfailures; j++) {
        player_token(who, sizeof who, p->failures[j].player);
        snprintf(head, sizeof head, "fail %s %u", who, p->failures[j].throw_no);
        push_text(out, head, p->failures[j].reason);
    }
    buf_printf(out, "throws %llu\n", (u64)p->nthrows);
    buf_add(&line, "", 0);
    while (i < p->nthrows) {
        n = 1;
        while (i + n < p->nthrows && p->throws[i + n][0] == p->throws[i][0] &&
               p->throws[i + n][1] == p->throws[i][1])
            n++;
        tok.n = 0;
        base36(&tok, p->throws[i][0]);
        if (p->throws[i][1] != p->throws[i][0]) {
            buf_add(&tok, ",", 1);
            base36(&tok, p->throws[i][1]);
        }
        if (n > 1)
            buf_printf(&tok, "*%llu", (u64)n);
        if (line.n && line.n + 1 + tok.n > PROTO_WIDTH) {
            buf_add(out, line.s, line.n);
            buf_add(out, "\n", 1);
            line.n = 0;
        }
        if (line.n)
            buf_add(&line, " ", 1);
        buf_add(&line, tok.s, tok.n);
        i += n;
    }
    if (line.n) {
        buf_add(out, line.s, line.n);
        buf_add(out, "\n", 1);
    }
    buf_printf(out, "%s %llu %08lx\n", PROTO_END, (u64)p->nthrows,
               crc32_of(out->s + start, out->n - start));
    free(line.s);
    free(tok.s);
}

/* The full format, exactly as the server's protocol::format_full. */
static void format_full(struct buf *out, const struct proto *p)
{
    u64 total[2] = {0, 0};
    size_t i;
    buf_printf(out, "KNOBELN game protocol (version %u)\n", p->version);
    buf_str(out, "P: ");
    buf_add(out, p->players[0].s, p->players[0].n);
    buf_str(out, "\nQ: ");
    buf_add(out, p->players[1].s, p->players[1].n);
    buf_printf(out, "\nround %u, group %u, slot %u, attempt %u, seed %llu\n", p->round,
               p->group, p->slot, p->attempt, p->seed);
    buf_printf(out, "rules: a %lld, b %lld, k %u, L %u\n\n", p->a, p->b, p->k, p->l);
    buf_printf(out, "%5s %6s %6s %3s %4s %8s %8s\n", "throw", "P", "Q", "won", "pts",
               "total P", "total Q");
    for (i = 0; i < p->nthrows; i++) {
        unsigned pts;
        int w = judge(p->throws[i][0], p->throws[i][1], &pts);
        if (w)
            total[w - 1] += pts;
        buf_printf(out, "%5llu %6lld %6lld %3s %4u %8llu %8llu\n", (u64)i + 1,
                   p->throws[i][0], p->throws[i][1], w == 1 ? "P" : w == 2 ? "Q" : "-",
                   pts, total[0], total[1]);
    }
    buf_printf(out, "\n%llu throws; points: P %llu, Q %llu\n", (u64)p->nthrows,
               p->points[0], p->points[1]);
    if (total[0] != p->points[0] || total[1] != p->points[1])
        buf_printf(out, "(but the throws add up to P %llu, Q %llu)\n", total[0], total[1]);
    if (!p->nfailures)
        buf_str(out, "no failure\n");
    for (i = 0; i < p->nfailures; i++) {
        const struct failure *f = &p->failures[i];
        if (f->player < 2) {
            buf_printf(out, "failure of %s (", f->player ? "Q" : "P");
            buf_add(out, p->players[f->player].s, p->players[f->player].n);
            buf_printf(out, ") in throw %u:\n  ", f->throw_no);
        } else {
            buf_printf(out, "failure of player %llu in throw %u:\n  ", f->player,
                       f->throw_no);
        }
        buf_add(out, f->reason.s, f->reason.n);
        buf_str(out, "\n");
    }
}

/* ==== shared part: end ==== */

/* ---- the game ---- */

struct config {
    i64 a, b;
    unsigned k, l;
    u64 cpu_secs;     /* CPU time per strategy and game */
    u64 memory_bytes; /* address space per strategy */
    u64 wall_ms;      /* wall clock for the whole game */
};

/* Longest line a strategy may print for one throw. */
#define MAX_LINE 24

struct side {
    pid_t pid; /* 0: not running */
    int to, from;
    char buf[512];
    size_t len;
    int eof, reaped, status;
};

enum { WAITING, THREW, FAILED };

struct slot {
    int state;
    i64 t;
    char *reason; /* FAILED: the sentence */
};

/* The run rule (rule 6) for one player. */
struct run {
    int started;
    i64 previous;
    unsigned len;
};

static char *xstrdup(const char *s)
{
    char *d = xrealloc(0, strlen(s) + 1);
    strcpy(d, s);
    return d;
}

/* SplitMix64's mixer and the contest's seed derivation. */
static u64 mix(u64 z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static u64 derive2(u64 seed, u64 a, u64 b)
{
    u64 h = mix(seed ^ 0x4B4E4F42454C4E00ULL); /* "KNOBELN\0" */
    h = mix(h ^ mix(a + 1 * 0x9E3779B97F4A7C15ULL));
    return mix(h ^ mix(b + 2 * 0x9E3779B97F4A7C15ULL));
}

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                          \
    do {                                                                                  \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                         \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                            \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                            \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                         \
    } while (0)

/* SipHash-2-4 of three 64-bit words (24 bytes, little-endian). */
static u64 siphash24_3(u64 k0, u64 k1, const u64 m[3])
{
    u64 v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    u64 v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    u64 last = (u64)24 << 56;
    int i;
    for (i = 0; i < 3; i++) {
        v3 ^= m[i];
        SIPROUND;
        SIPROUND;
        v0 ^= m[i];
    }
    v3 ^= last;
    SIPROUND;
    SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* A player's seed in a local game: SipHash-2-4 under the key that the
   contest derives from the game seed for local games (knobeln play, the
   compile service's trial game). In the contest itself the key is the
   tournament's secret, so that a strategy's own seed tells nothing about
   its opponent's. */
static u64 player_seed(u64 game_seed, u64 player)
{
    u64 tag = 0x4B4559; /* "KEY" */
    u64 k0 = derive2(game_seed, tag, 0), k1 = derive2(game_seed, tag, 1);
    u64 m[3];
    m[0] = 0x004E4C45424F4E4BULL; /* "KNOBELN\0" read little-endian */
    m[1] = game_seed;
    m[2] = player;
    return siphash24_3(k0, k1, m);
}

static u64 now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (u64)ts.tv_sec * 1000 + (u64)ts.tv_nsec / 1000000;
}

/* "throw N: what" */
static char *reason(unsigned n, const char *fmt, ...)
{
    struct buf b = {0, 0, 0};
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    buf_printf(&b, "throw %u: ", n);
    buf_str(&b, tmp);
    return b.s;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "a segmentation fault";
    case SIGBUS: return "a bus error";
    case SIGILL: return "an illegal instruction";
    case SIGFPE: return "an arithmetic exception (division by zero?)";
    case SIGTRAP: return "a trap";
    case SIGABRT: return "an abort";
    case SIGXFSZ: return "a file size violation";
    default: return "a signal";
    }
}

/* What a strategy printed, quoted as the contest's referee quotes it: the
   first MAX_LINE characters, escaped, "..." if there was more. */
static void printable(struct buf *o, const char *s, size_t n)
{
    size_t i = 0, chars = 0;
    while (i < n && chars < MAX_LINE) {
        unsigned long cp;
        int k = utf8_seq((const unsigned char *)s + i, n - i, &cp);
        if (k < 0) {
            cp = 0xFFFD;
            k = -k;
        }
        i += (size_t)k;
        chars++;
        if (cp == '\t')
            buf_str(o, "\\t");
        else if (cp == '\r')
            buf_str(o, "\\r");
        else if (cp == '\n')
            buf_str(o, "\\n");
        else if (cp == '\\' || cp == '\'' || cp == '"') {
            char e[2] = {'\\', (char)cp};
            buf_add(o, e, 2);
        } else if (cp >= 0x20 && cp <= 0x7E) {
            char c = (char)cp;
            buf_add(o, &c, 1);
        } else
            buf_printf(o, "\\u{%lx}", cp);
    }
    if (n > MAX_LINE)
        buf_str(o, "...");
}

static char *output_failure(unsigned n, const char *s, size_t len)
{
    struct buf q = {0, 0, 0};
    char *r;
    buf_add(&q, "", 0);
    printable(&q, s, len);
    r = reason(n,
               "printed \"%s\" where a throw (one integer on a line) was expected; "
               "use make_throw() and print nothing else",
               q.s);
    free(q.s);
    return r;
}

/* A throw as the contest reads it: optional '-', 1 to 18 digits, optional
   carriage return. */
static int parse_throw(const char *s, size_t n, i64 *t)
{
    size_t i = 0;
    int neg = 0;
    i64 v = 0;
    if (n > 0 && s[n - 1] == '\r')
        n--;
    if (n > 0 && s[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (n - i == 0 || n - i > 18)
        return 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *t = neg ? -v : v;
    return 1;
}

/* Takes one line from a side's buffer into the slot, if there is one. */
static int take_line(struct side *sd, struct slot *sl, unsigned n)
{
    char *nl = memchr(sd->buf, '\n', sd->len);
    size_t k;
    if (!nl) {
        if (sd->len > MAX_LINE) {
            sl->state = FAILED;
            sl->reason = output_failure(n, sd->buf, sd->len);
            return 1;
        }
        return 0;
    }
    k = (size_t)(nl - sd->buf);
    if (parse_throw(sd->buf, k, &sl->t)) {
        sl->state = THREW;
    } else {
        sl->state = FAILED;
        sl->reason = output_failure(n, sd->buf, k);
    }
    memmove(sd->buf, nl + 1, sd->len - k - 1);
    sd->len -= k + 1;
    return 1;
}

static void kill_side(struct side *sd)
{
    if (sd->pid > 0 && !sd->reaped)
        kill(-sd->pid, SIGKILL);
}

static void reap(struct side *sd)
{
    int st;
    if (sd->pid <= 0 || sd->reaped)
        return;
    kill_side(sd);
    while (waitpid(sd->pid, &st, 0) < 0 && errno == EINTR)
        ;
    sd->reaped = 1;
    sd->status = st;
}

/* The player's output ended before its throw n: find out why. */
static char *ended(const struct config *cfg, struct side *sd, unsigned n)
{
    u64 deadline = now_ms() + 200;
    int st, done = 0;
    for (;;) {
        pid_t r = waitpid(sd->pid, &st, WNOHANG);
        if (r == sd->pid) {
            sd->reaped = 1;
            sd->status = st;
            done = 1;
            break;
        }
        if (now_ms() >= deadline)
            break;
        {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, 0);
        }
    }
    if (!done) { /* it closed its output but went on: it is dead now */
        reap(sd);
        return reason(n, "ended (exit status -1) before the game was over; a game has %u "
                         "throws, so keep calling make_throw() (best in an endless loop)",
                      cfg->l);
    }
    if (WIFEXITED(st))
        return reason(n, "ended (exit status %d) before the game was over; a game has %u "
                         "throws, so keep calling make_throw() (best in an endless loop)",
                      WEXITSTATUS(st), cfg->l);
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        if (sig == SIGXCPU)
            return reason(n, "used more than its %llu s of CPU time for the game "
                             "(requirement 6)",
                          cfg->cpu_secs);
        if (sig == SIGKILL || sig == SIGSYS)
            return reason(n, "made a system call other than read, write or exit, and was "
                             "stopped (requirement 1: no library routines except the five)");
        if (sig == SIGSEGV || sig == SIGBUS)
            return reason(n, "crashed with %s (signal %d); a bad pointer, or stack and data "
                             "beyond the memory limit of %llu kB",
                          signal_name(sig), sig, cfg->memory_bytes / 1024);
        return reason(n, "crashed with %s (signal %d)", signal_name(sig), sig);
    }
    return reason(n, "ended (exit status -1) before the game was over; a game has %u "
                     "throws, so keep calling make_throw() (best in an endless loop)",
                  cfg->l);
}

static void cloexec(int fd)
{
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* In a new strategy process: tells the referee why it could not start. */
static void child_fails(int errfd, int e)
{
    ssize_t r = write(errfd, &e, sizeof e);
    (void)r;
    _exit(127);
}

static void limit(int errfd, int resource, u64 soft, u64 hard)
{
    struct rlimit r;
    r.rlim_cur = (rlim_t)soft;
    r.rlim_max = (rlim_t)hard;
    if (setrlimit(resource, &r) != 0)
        child_fails(errfd, errno);
}

/* Starts a strategy with its seed as the only argument. Returns 0, or the
   errno of a failed exec (ENOMEM: it does not fit into the memory limit). */
static int spawn(struct side *sd, const char *path, u64 seed, const struct config *cfg)
{
    int in[2], out[2], err[2], e = 0;
    char seedarg[24];
    ssize_t r;
    pid_t pid;
    if (pipe(in) || pipe(out) || pipe(err))
        die("cannot create pipes");
    cloexec(in[0]);
    cloexec(in[1]);
    cloexec(out[0]);
    cloexec(out[1]);
    cloexec(err[0]);
    cloexec(err[1]);
    snprintf(seedarg, sizeof seedarg, "%llu", seed);
    pid = fork();
    if (pid < 0)
        die("cannot fork");
    if (pid == 0) {
        char *argv[3], *envp[1];
        int devnull = open("/dev/null", O_WRONLY);
        setpgid(0, 0);
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || devnull < 0 || dup2(devnull, 2) < 0)
            child_fails(err[1], errno);
        if (devnull != 2)
            close(devnull);
        signal(SIGPIPE, SIG_DFL);
#ifdef __linux__
        /* Dies with the referee, even on kill -9. */
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        /* The same addresses in every run, as in the contest. */
        personality((unsigned long)personality(0xffffffff) | ADDR_NO_RANDOMIZE);
#endif
        limit(err[1], RLIMIT_CPU, cfg->cpu_secs, cfg->cpu_secs + 1);
        limit(err[1], RLIMIT_FSIZE, 0, 0);
        limit(err[1], RLIMIT_CORE, 0, 0);
        limit(err[1], RLIMIT_NOFILE, 4, 4);
        /* Last: from here on the exec itself counts against the limit. */
        limit(err[1], RLIMIT_AS, cfg->memory_bytes, cfg->memory_bytes);
        argv[0] = "strategy";
        argv[1] = seedarg;
        argv[2] = 0;
        envp[0] = 0;
        execve(path, argv, envp);
        child_fails(err[1], errno);
    }
    setpgid(pid, pid); /* no race with the child's own setpgid */
    close(in[0]);
    close(out[1]);
    close(err[1]);
    do
        r = read(err[0], &e, sizeof e);
    while (r < 0 && errno == EINTR);
    close(err[0]);
    if (r == (ssize_t)sizeof e) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        close(in[1]);
        close(out[0]);
        return e ? e : EIO;
    }
    fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
    sd->pid = pid;
    sd->to = in[1];
    sd->from = out[0];
    return 0;
}

static void read_some(struct side *sd)
{
    ssize_t r;
    size_t room = sizeof sd->buf - sd->len;
    if (room > 256)
        room = 256;
    do
        r = read(sd->from, sd->buf + sd->len, room);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        die("cannot read from a strategy");
    }
    if (r == 0)
        sd->eof = 1;
    else
        sd->len += (size_t)r;
}

/* Reads until both slots hold a throw or a failure. */
static void collect(const struct config *cfg, struct side *sides, struct slot *slots,
                    unsigned n, u64 deadline)
{
    for (;;) {
        struct pollfd pfd[2];
        int who[2], np = 0, i, r;
        u64 now;
        for (i = 0; i < 2; i++) {
            if (slots[i].state == WAITING && !take_line(&sides[i], &slots[i], n) &&
                sides[i].eof) {
                slots[i].state = FAILED;
                slots[i].reason = ended(cfg, &sides[i], n);
            }
        }
        for (i = 0; i < 2; i++) {
            if (slots[i].state == WAITING) {
                pfd[np].fd = sides[i].from;
                pfd[np].events = POLLIN;
                pfd[np].revents = 0;
                who[np++] = i;
            }
        }
        if (np == 0)
            return;
        now = now_ms();
        r = now >= deadline ? 0 : poll(pfd, (nfds_t)np, (int)(deadline - now));
        if (r < 0 && errno != EINTR)
            die("poll failed");
        for (i = 0; r > 0 && i < np; i++)
            if (pfd[i].revents)
                read_some(&sides[who[i]]);
        if (now_ms() >= deadline) {
            /* Time is up: whoever still owes its throw has failed. */
            for (i = 0; i < 2; i++) {
                if (slots[i].state == WAITING && !take_line(&sides[i], &slots[i], n)) {
                    char secs[32];
                    u64 ms = cfg->wall_ms;
                    int len = snprintf(secs, sizeof secs, "%llu", ms / 1000);
                    if (ms % 1000) {
                        snprintf(secs + len, sizeof secs - (size_t)len, ".%03llu", ms % 1000);
                        while (secs[strlen(secs) - 1] == '0')
                            secs[strlen(secs) - 1] = 0;
                    }
                    slots[i].state = FAILED;
                    slots[i].reason = reason(n, "gave no throw within the game's wall-clock "
                                                "limit of %s s (it blocked, or waited for "
                                                "input that never comes)",
                                             secs);
                }
            }
        }
    }
}

/* Sends a throw: 0 sent, 1 the player is gone (reported at its next
   throw), 2 it does not read (its fault now). */
static int send_throw(struct side *sd, i64 t)
{
    char line[32];
    int len = snprintf(line, sizeof line, "%lld\n", t);
    ssize_t r;
    do
        r = write(sd->to, line, (size_t)len);
    while (r < 0 && errno == EINTR);
    if (r == len)
        return 0;
    if (r >= 0 || errno == EAGAIN || errno == EWOULDBLOCK)
        return 2;
    return 1;
}

/* Rules 1 and 6; NULL if the throw is fine. */
static char *check_throw(const struct config *cfg, struct run *run, i64 t, unsigned n)
{
    if (t < cfg->a || t > cfg->b)
        return reason(n, "threw %lld, outside the allowed range %lld..%lld (rule 1)", t,
                      cfg->a, cfg->b);
    if (run->started && t < run->previous) {
        if (run->len < cfg->k)
            return reason(n, "threw %lld after %lld, but its non-decreasing series was only "
                             "%u throw%s long; every series must be at least %u long "
                             "(rule 6)",
                          t, run->previous, run->len, run->len == 1 ? "" : "s", cfg->k);
        run->len = 1;
    } else {
        run->len++;
    }
    run->started = 1;
    run->previous = t;
    return 0;
}

static void add_failure(struct proto *p, u64 player, unsigned n, char *why)
{
    struct failure f;
    f.player = player;
    f.throw_no = n;
    f.reason.s = why;
    f.reason.n = strlen(why);
    p->failures = xrealloc(p->failures, (p->nfailures + 1) * sizeof *p->failures);
    p->failures[p->nfailures++] = f;
}

static void play(const struct config *cfg, const char *paths[2], struct proto *p)
{
    struct side sides[2];
    struct run runs[2];
    u64 deadline = now_ms() + (cfg->wall_ms ? cfg->wall_ms : 1);
    unsigned n;
    int i, early = 0;
    memset(sides, 0, sizeof sides);
    memset(runs, 0, sizeof runs);
    for (i = 0; i < 2; i++) {
        int e = spawn(&sides[i], paths[i], player_seed(p->seed, (u64)i), cfg);
        if (e == ENOMEM) {
            add_failure(p, (u64)i, 1,
                        reason(1, "needs more than the %llu kB of memory a strategy may use "
                                  "(requirement 5): make static arrays smaller",
                               cfg->memory_bytes / 1024));
            sides[i].eof = 1;
            early = 1;
        } else if (e) {
            fprintf(stderr, "%s: cannot start %s: %s\n", progname, paths[i], strerror(e));
            reap(&sides[0]);
            exit(2);
        }
    }
    for (n = 1; !early && n <= cfg->l; n++) {
        struct slot slots[2];
        i64 t[2] = {0, 0};
        unsigned pts;
        int w, failed = 0;
        memset(slots, 0, sizeof slots);
        collect(cfg, sides, slots, n, deadline);
        for (i = 0; i < 2; i++) {
            if (slots[i].state == THREW) {
                char *why = check_throw(cfg, &runs[i], slots[i].t, n);
                if (why) {
                    slots[i].state = FAILED;
                    slots[i].reason = why;
                } else {
                    t[i] = slots[i].t;
                }
            }
        }
        for (i = 0; i < 2; i++) {
            if (slots[i].state == FAILED) {
                add_failure(p, (u64)i, n, slots[i].reason);
                failed = 1;
            }
        }
        if (failed)
            break;
        w = judge(t[0], t[1], &pts);
        if (w)
            p->points[w - 1] += pts;
        proto_push_throw(p, t[0], t[1]);
        if (n == cfg->l)
            break;
        /* Each player learns the other's throw. */
        for (i = 0; i < 2; i++)
            if (send_throw(&sides[i], t[1 - i]) == 2)
                add_failure(p, (u64)i, n + 1,
                            reason(n + 1, "stopped reading the opponent's throws "
                                          "(make_throw() reads them)"));
        if (p->nfailures)
            break;
    }
    for (i = 0; i < 2; i++) {
        reap(&sides[i]);
        if (sides[i].pid > 0) {
            close(sides[i].to);
            close(sides[i].from);
        }
    }
}

static void usage(void)
{
    fprintf(stderr,
            "usage: %s [-s seed] [-L 1000] [-k 8] [-a 1] [-b 12288] [-v]\n"
            "          [-t cpu_secs] [-m memory_kb] [-w wall_secs] [-p name] [-q name]\n"
            "          strategyA strategyB\n",
            progname);
    exit(2);
}

static u64 num_arg(const char *s, u64 max)
{
    char *end;
    unsigned long long v;
    errno = 0;
    if (*s < '0' || *s > '9')
        usage();
    v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        usage();
    return v;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int main(int argc, char **argv)
{
    struct config cfg;
    struct proto p;
    struct buf out = {0, 0, 0};
    const char *paths[2], *names[2] = {0, 0};
    int opt, verbose = 0, have_seed = 0;
    u64 seed = 0;
    double wall;
    char *end;

    progname = "referee";
    cfg.a = 1;
    cfg.b = 12288;
    cfg.k = 8;
    cfg.l = 1000;
    cfg.cpu_secs = 2;
    cfg.memory_bytes = 1024 * 1024;
    cfg.wall_ms = 10000;
    while ((opt = getopt(argc, argv, "s:L:k:a:b:vt:m:w:p:q:")) != -1) {
        switch (opt) {
        case 's': seed = num_arg(optarg, ~0ULL); have_seed = 1; break;
        case 'L': cfg.l = (unsigned)num_arg(optarg, 1000000); break;
        case 'k': cfg.k = (unsigned)num_arg(optarg, 0xFFFFFFFFULL); break;
        case 'a': cfg.a = (i64)num_arg(optarg, 1ULL << 40); break;
        case 'b': cfg.b = (i64)num_arg(optarg, 1ULL << 40); break;
        case 'v': verbose = 1; break;
        case 't': cfg.cpu_secs = num_arg(optarg, 86400); break;
        case 'm': cfg.memory_bytes = num_arg(optarg, 1ULL << 30) * 1024; break;
        case 'w':
            wall = strtod(optarg, &end);
            if (*end || !(wall > 0 && wall <= 86400))
                usage();
            cfg.wall_ms = (u64)(wall * 1000 + 0.5);
            break;
        case 'p': names[0] = optarg; break;
        case 'q': names[1] = optarg; break;
        default: usage();
        }
    }
    if (argc - optind != 2)
        usage();
    if (cfg.a < 1 || cfg.b < cfg.a || cfg.k < 1 || cfg.l < 1 || cfg.cpu_secs < 1) {
        fprintf(stderr, "%s: need 1 <= a <= b, k >= 1, L >= 1, cpu_secs >= 1\n", progname);
        return 2;
    }
    paths[0] = argv[optind];
    paths[1] = argv[optind + 1];
    if (!have_seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = mix((u64)ts.tv_sec * 1000000007ULL ^ (u64)ts.tv_nsec ^ ((u64)getpid() << 32));
    }
    signal(SIGPIPE, SIG_IGN);

    memset(&p, 0, sizeof p);
    p.version = PROTO_VERSION;
    for (opt = 0; opt < 2; opt++) {
        p.players[opt].s = xstrdup(names[opt] ? names[opt] : base_name(paths[opt]));
        p.players[opt].n = strlen(p.players[opt].s);
    }
    p.round = 0;
    p.group = 0;
    p.slot = 0;
    p.attempt = 1;
    p.seed = seed;
    p.a = cfg.a;
    p.b = cfg.b;
    p.k = cfg.k;
    p.l = cfg.l;
    play(&cfg, paths, &p);

    if (verbose)
        format_full(&out, &p);
    else
        encode(&out, &p);
    if (fwrite(out.s, 1, out.n, stdout) != out.n || fflush(stdout) != 0) {
        fprintf(stderr, "%s: cannot write the output\n", progname);
        return 2;
    }
    return p.nfailures ? 1 : 0;
}
