/*
 * protocolfmt.c -- the KNOBELN game protocol formatter (participant kit).
 *
 * Reads compact game protocols -- a DGP mail as you received it, headers
 * and all, or the output of the kit's referee -- from the files named on
 * the command line or from standard input, and prints each protocol in the
 * full format: one line per throw with both throws, the winner, the
 * winner's points and the running totals, then the points and failures.
 * The text is exactly what the contest server prints for the same protocol.
 * Several protocols are printed one after the other, separated by an empty
 * line.
 *
 *   gcc -O2 -o protocolfmt protocolfmt.c
 *   ./protocolfmt mail.txt            full format
 *   ./referee a b | ./protocolfmt     same as ./referee -v a b
 *   ./protocolfmt -c mail.txt         only cut the compact protocols out
 *
 * A damaged or truncated protocol (wrong count or checksum, missing end
 * line) is an error: nothing is printed, the reason goes to standard error,
 * and the exit status is 1 (also when no protocol is found at all).
 *
 * Plain C99 with the standard library. (In 1994 this was a Perl script.)
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- decoding (see README, "The game protocol") ---- */

struct line {
    const char *s;
    size_t n;
};

struct cursor {
    struct line *lines;
    size_t nlines;
    size_t next;  /* index of the next line to read */
    size_t start; /* 1-based number of the begin line */
    struct buf crc;
};

static void fail_at(size_t line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", progname);
    if (line)
        fprintf(stderr, "line %lu: ", (unsigned long)line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static int line_is(struct line l, const char *s)
{
    return l.n == strlen(s) && memcmp(l.s, s, l.n) == 0;
}

static int line_starts(struct line l, const char *s)
{
    size_t n = strlen(s);
    return l.n >= n && memcmp(l.s, s, n) == 0;
}

/* Decimal digits only (no sign), at most max. */
static int parse_unsigned(const char *s, size_t n, u64 max, u64 *out)
{
    u64 v = 0;
    size_t i;
    if (n == 0)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned d;
        if (s[i] < '0' || s[i] > '9')
            return 0;
        d = (unsigned)(s[i] - '0');
        if (v > (~0ULL - d) / 10)
            return 0;
        v = v * 10 + d;
        if (v > max)
            return 0;
    }
    *out = v;
    return 1;
}

/* Optional '-', decimal digits, within 64 bits. */
static int parse_signed(const char *s, size_t n, i64 *out)
{
    size_t neg = n > 0 && s[0] == '-';
    u64 v;
    if (!parse_unsigned(s + neg, n - neg, neg ? 1ULL << 63 : (1ULL << 63) - 1, &v))
        return 0;
    *out = neg ? (i64)(0 - v) : (i64)v;
    return 1;
}

/* Optional '-', digits 0-9a-z, within 64 bits. */
static int parse_base36(const char *s, size_t n, i64 *out)
{
    size_t neg = n > 0 && s[0] == '-', i;
    u64 v = 0, max = neg ? 1ULL << 63 : (1ULL << 63) - 1;
    if (neg == n)
        return 0;
    for (i = neg; i < n; i++) {
        unsigned d;
        if (s[i] >= '0' && s[i] <= '9')
            d = (unsigned)(s[i] - '0');
        else if (s[i] >= 'a' && s[i] <= 'z')
            d = (unsigned)(s[i] - 'a') + 10;
        else
            return 0;
        if (v > (~0ULL - d) / 36)
            return 0;
        v = v * 36 + d;
        if (v > max)
            return 0;
    }
    *out = neg ? (i64)(0 - v) : (i64)v;
    return 1;
}

/* Is this (normalized) line the first line of a protocol? */
static int is_begin(struct line l)
{
    size_t i, n = strlen(PROTO_BEGIN " ");
    if (!line_starts(l, PROTO_BEGIN " ") || l.n == n)
        return 0;
    for (i = n; i < l.n; i++)
        if (l.s[i] < '0' || l.s[i] > '9')
            return 0;
    return 1;
}

static struct line take(struct cursor *c)
{
    /* The empty piece after a final newline is the end of the text. */
    if (c->next >= c->nlines || (c->next + 1 == c->nlines && c->lines[c->next].n == 0))
        fail_at(0, "the protocol starting at line %lu ends before its %s line (truncated?)",
                (unsigned long)c->start, PROTO_END);
    return c->lines[c->next++];
}

static struct line take_counted(struct cursor *c)
{
    struct line l = take(c);
    buf_add(&c->crc, l.s, l.n);
    buf_add(&c->crc, "\n", 1);
    return l;
}

/* Splits a line into words at blanks and tabs; returns how many (only the
   first max are stored). */
#define MAX_WORDS 12
static size_t split_words(struct line l, struct line *w, size_t max)
{
    size_t i = 0, k = 0;
    while (i < l.n) {
        size_t j;
        while (i < l.n && (l.s[i] == ' ' || l.s[i] == '\t'))
            i++;
        if (i == l.n)
            break;
        j = i;
        while (j < l.n && l.s[j] != ' ' && l.s[j] != '\t')
            j++;
        if (k < max) {
            w[k].s = l.s + i;
            w[k].n = j - i;
        }
        k++;
        i = j;
    }
    return k;
}

/* A line of words starting with keyword; returns the number of words. */
static size_t words(struct cursor *c, const char *keyword, struct line *w)
{
    struct line l = take_counted(c);
    size_t n = split_words(l, w, MAX_WORDS);
    if (n == 0 || !line_is(w[0], keyword))
        fail_at(c->next, "expected a \"%s\" line, found \"%.*s\"", keyword, (int)l.n, l.s);
    return n;
}

/* A line "[keyword] label1 N1 label2 N2 ..." (no keyword if it is ""): the
   numbers' texts in num. */
static void labelled(struct cursor *c, const char *keyword, const char *const *labels,
                     size_t nlabels, struct line *num)
{
    struct line l = take_counted(c), w[MAX_WORDS];
    size_t n = split_words(l, w, MAX_WORDS), skip = keyword[0] != 0, i;
    int ok = n == skip + 2 * nlabels && (!skip || line_is(w[0], keyword));
    for (i = 0; ok && i < nlabels; i++)
        ok = line_is(w[skip + 2 * i], labels[i]);
    if (!ok)
        fail_at(c->next, "expected a \"%s\" line, found \"%.*s\"", skip ? keyword : labels[0],
                (int)l.n, l.s);
    for (i = 0; i < nlabels; i++)
        num[i] = w[skip + 1 + 2 * i];
}

static u64 need_unsigned(struct cursor *c, struct line w, u64 max)
{
    u64 v;
    if (!parse_unsigned(w.s, w.n, max, &v))
        fail_at(c->next, "\"%.*s\" is not a number in 0..%llu", (int)w.n, w.s, max);
    return v;
}

static unsigned need_u32(struct cursor *c, struct line w)
{
    return (unsigned)need_unsigned(c, w, 0xFFFFFFFFULL);
}

static i64 need_signed(struct cursor *c, struct line w)
{
    i64 v;
    if (!parse_signed(w.s, w.n, &v))
        fail_at(c->next, "\"%.*s\" is not a 64-bit number", (int)w.n, w.s);
    return v;
}

static int hexval(char h)
{
    if (h >= '0' && h <= '9')
        return h - '0';
    if (h >= 'a' && h <= 'f')
        return h - 'a' + 10;
    if (h >= 'A' && h <= 'F')
        return h - 'A' + 10;
    return -1;
}

/* Free text: first, then the "+" lines that follow; %HH decoded; must be
   UTF-8. */
static struct str text(struct cursor *c, const char *first, size_t nfirst)
{
    struct buf e = {0, 0, 0}, d = {0, 0, 0};
    struct str out;
    size_t i;
    buf_add(&e, first, nfirst);
    buf_add(&d, "", 0);
    while (c->next < c->nlines && c->lines[c->next].n > 0 && c->lines[c->next].s[0] == '+') {
        struct line l = take_counted(c);
        buf_add(&e, l.s + 1, l.n - 1);
    }
    for (i = 0; i < e.n;) {
        if (e.s[i] == '%') {
            int h1 = i + 2 < e.n ? hexval(e.s[i + 1]) : -1;
            int h2 = i + 2 < e.n ? hexval(e.s[i + 2]) : -1;
            char ch;
            if (h1 < 0 || h2 < 0)
                fail_at(c->next, "a %% not followed by two hex digits");
            ch = (char)(h1 * 16 + h2);
            buf_add(&d, &ch, 1);
            i += 3;
        } else {
            buf_add(&d, e.s + i, 1);
            i++;
        }
    }
    for (i = 0; i < d.n;) {
        unsigned long cp;
        int k = utf8_seq((const unsigned char *)d.s + i, d.n - i, &cp);
        if (k < 0)
            fail_at(c->next, "text is not UTF-8");
        i += (size_t)k;
    }
    free(e.s);
    out.s = d.s;
    out.n = d.n;
    return out;
}

/* A line "head text...": the text. */
static struct str headed(struct cursor *c, const char *head)
{
    struct line l = take_counted(c);
    size_t n = strlen(head);
    if (line_is(l, head))
        return text(c, "", 0);
    if (l.n > n && memcmp(l.s, head, n) == 0 && l.s[n] == ' ')
        return text(c, l.s + n + 1, l.n - n - 1);
    fail_at(c->next, "expected a \"%s\" line, found \"%.*s\"", head, (int)l.n, l.s);
    return text(c, "", 0);
}

/* Cuts the next blank-terminated field off *l (splitting at ' ' only). */
static struct line field(struct line *l)
{
    struct line f = *l;
    const char *sp = memchr(l->s, ' ', l->n);
    if (sp) {
        f.n = (size_t)(sp - l->s);
        l->s = sp + 1;
        l->n -= f.n + 1;
    } else {
        l->s += l->n;
        l->n = 0;
    }
    return f;
}

static void push_failure(struct proto *p, struct failure f)
{
    p->failures = xrealloc(p->failures, (p->nfailures + 1) * sizeof *p->failures);
    p->failures[p->nfailures++] = f;
}

static void decode_one(struct cursor *c, struct proto *p)
{
    static const char *const game_labels[] = {"round", "group", "slot", "attempt"};
    static const char *const param_labels[] = {"a", "b", "k", "L"};
    static const char *const point_labels[] = {"P", "Q"};
    struct line l, w[MAX_WORDS];
    u64 v, n;
    size_t nw, skip = strlen(PROTO_BEGIN " ");
    unsigned long computed, found;

    memset(p, 0, sizeof *p);
    l = take_counted(c);
    if (!parse_unsigned(l.s + skip, l.n - skip, 0xFFFFFFFFULL, &v))
        fail_at(c->next, "the protocol version is not a number");
    if (v != PROTO_VERSION)
        fail_at(c->next, "protocol version %llu is not supported (only %d is)", v,
                PROTO_VERSION);
    p->version = (unsigned)v;
    p->players[0] = headed(c, "team P");
    p->players[1] = headed(c, "team Q");
    labelled(c, "", game_labels, 4, w);
    p->round = need_u32(c, w[0]);
    p->group = need_u32(c, w[1]);
    p->slot = need_u32(c, w[2]);
    p->attempt = need_u32(c, w[3]);
    if (words(c, "seed", w) != 2)
        fail_at(c->next, "expected \"seed N\"");
    p->seed = need_unsigned(c, w[1], ~0ULL);
    labelled(c, "", param_labels, 4, w);
    p->a = need_signed(c, w[0]);
    p->b = need_signed(c, w[1]);
    p->k = need_u32(c, w[2]);
    p->l = need_u32(c, w[3]);
    labelled(c, "points", point_labels, 2, w);
    p->points[0] = need_unsigned(c, w[0], ~0ULL);
    p->points[1] = need_unsigned(c, w[1], ~0ULL);
    while (c->next < c->nlines &&
           (line_is(c->lines[c->next], "fail") || line_starts(c->lines[c->next], "fail "))) {
        struct failure f;
        struct line rest = take_counted(c), who, thr;
        field(&rest);
        who = field(&rest);
        thr = field(&rest);
        if (line_is(who, "P"))
            f.player = 0;
        else if (line_is(who, "Q"))
            f.player = 1;
        else if (!parse_unsigned(who.s, who.n, 0xFFFFFFFFULL, &f.player) || f.player < 2)
            fail_at(c->next, "\"%.*s\" is not a player (P or Q)", (int)who.n, who.s);
        f.throw_no = need_u32(c, thr);
        f.reason = text(c, rest.s, rest.n);
        push_failure(p, f);
    }
    if (words(c, "throws", w) != 2)
        fail_at(c->next, "expected \"throws N\"");
    n = need_unsigned(c, w[1], PROTO_MAX_THROWS);
    while (p->nthrows < n) {
        size_t i, k;
        l = take_counted(c);
        if (l.n == 0 || line_starts(l, PROTO_END))
            fail_at(c->next, "%llu throws announced, the protocol has only %llu", n,
                    (u64)p->nthrows);
        for (i = 0; i < l.n;) {
            struct line tok, pair, cnt, ps, qs;
            const char *star, *comma;
            u64 count = 1;
            i64 x, y;
            while (i < l.n && (l.s[i] == ' ' || l.s[i] == '\t'))
                i++;
            if (i == l.n)
                break;
            tok.s = l.s + i;
            while (i < l.n && l.s[i] != ' ' && l.s[i] != '\t')
                i++;
            tok.n = (size_t)(l.s + i - tok.s);
            pair = tok;
            star = memchr(tok.s, '*', tok.n);
            if (star) {
                pair.n = (size_t)(star - tok.s);
                cnt.s = star + 1;
                cnt.n = tok.n - pair.n - 1;
                if (!parse_unsigned(cnt.s, cnt.n, PROTO_MAX_THROWS, &count) || count < 1)
                    fail_at(c->next, "bad repeat count in \"%.*s\"", (int)tok.n, tok.s);
            }
            ps = qs = pair;
            comma = memchr(pair.s, ',', pair.n);
            if (comma) {
                ps.n = (size_t)(comma - pair.s);
                qs.s = comma + 1;
                qs.n = pair.n - ps.n - 1;
            }
            if (!parse_base36(ps.s, ps.n, &x) || !parse_base36(qs.s, qs.n, &y))
                fail_at(c->next, "\"%.*s\" is not a pair of base-36 throws", (int)tok.n,
                        tok.s);
            if (p->nthrows + count > n)
                fail_at(c->next, "more throws than the %llu announced", n);
            for (k = 0; k < count; k++)
                proto_push_throw(p, x, y);
        }
    }
    computed = crc32_of(c->crc.s, c->crc.n);
    l = take(c);
    nw = split_words(l, w, MAX_WORDS);
    if (nw != 3 || !line_is(w[0], PROTO_END))
        fail_at(c->next, "expected \"%s %llu <crc32>\" after the %llu throws, found \"%.*s\"",
                PROTO_END, n, n, (int)l.n, l.s);
    if (!parse_unsigned(w[1].s, w[1].n, PROTO_MAX_THROWS, &v) || v != n)
        fail_at(c->next, "the end line counts %.*s throws, the protocol has %llu",
                (int)w[1].n, w[1].s, n);
    found = 0;
    for (nw = 0; nw < w[2].n; nw++) {
        int h = hexval(w[2].s[nw]);
        if (h < 0)
            break;
        found = found * 16 + (unsigned long)h;
    }
    if (w[2].n != 8 || nw != 8)
        fail_at(c->next, "\"%.*s\" is not a CRC-32 (8 hex digits)", (int)w[2].n, w[2].s);
    if (found != computed)
        fail_at(c->next,
                "checksum %08lx does not match the protocol's %08lx "
                "(the mail was damaged on its way)",
                found, computed);
}

/* A line without quoting in front and blanks behind. */
static struct line normalize(const char *s, size_t n)
{
    struct line l;
    while (n > 0 && (*s == ' ' || *s == '\t' || *s == '>' || *s == '|')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
                     s[n - 1] == '\v' || s[n - 1] == '\f'))
        n--;
    l.s = s;
    l.n = n;
    return l;
}

static void read_all(FILE *f, const char *name, struct buf *in)
{
    char chunk[65536];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_add(in, chunk, r);
    if (ferror(f)) {
        fprintf(stderr, "%s: cannot read %s\n", progname, name);
        exit(2);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: %s [-c] [file ...]\n"
                    "  prints the game protocols in the files (or standard input)\n"
                    "  in the full format; -c: in the compact format\n",
            progname);
    exit(2);
}

int main(int argc, char **argv)
{
    struct buf in = {0, 0, 0}, out = {0, 0, 0};
    struct line *lines = 0;
    size_t nlines = 0, i, start, nprotos = 0;
    struct proto *protos = 0;
    int compact = 0, a = 1;

    progname = "protocolfmt";
    if (a < argc && strcmp(argv[a], "-c") == 0) {
        compact = 1;
        a++;
    }
    if (a < argc && strcmp(argv[a], "--") == 0)
        a++;
    else if (a < argc && argv[a][0] == '-' && argv[a][1])
        usage();
    buf_add(&in, "", 0);
    if (a == argc) {
        read_all(stdin, "standard input", &in);
    } else {
        for (; a < argc; a++) {
            FILE *f = strcmp(argv[a], "-") ? fopen(argv[a], "rb") : stdin;
            if (!f) {
                fprintf(stderr, "%s: cannot open %s\n", progname, argv[a]);
                exit(2);
            }
            read_all(f, argv[a], &in);
            if (f != stdin)
                fclose(f);
        }
    }
    /* Lines, split at every newline (a final newline leaves an empty line). */
    for (start = 0, i = 0;; i++) {
        if (i == in.n || in.s[i] == '\n') {
            lines = xrealloc(lines, (nlines + 1) * sizeof *lines);
            lines[nlines++] = normalize(in.s + start, i - start);
            start = i + 1;
            if (i == in.n)
                break;
        }
    }
    for (i = 0; i < nlines;) {
        if (is_begin(lines[i])) {
            struct cursor c;
            c.lines = lines;
            c.nlines = nlines;
            c.next = i;
            c.start = i + 1;
            c.crc.s = 0;
            c.crc.n = c.crc.cap = 0;
            protos = xrealloc(protos, (nprotos + 1) * sizeof *protos);
            decode_one(&c, &protos[nprotos++]);
            free(c.crc.s);
            i = c.next;
        } else {
            i++;
        }
    }
    if (nprotos == 0)
        fail_at(0, "no KNOBELN protocol found (no line \"%s %d\")", PROTO_BEGIN,
                PROTO_VERSION);
    for (i = 0; i < nprotos; i++) {
        if (i && !compact)
            buf_str(&out, "\n");
        if (compact)
            encode(&out, &protos[i]);
        else
            format_full(&out, &protos[i]);
    }
    if (fwrite(out.s, 1, out.n, stdout) != out.n || fflush(stdout) != 0) {
        fprintf(stderr, "%s: cannot write the output\n", progname);
        return 2;
    }
    return 0;
}
