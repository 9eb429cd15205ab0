/* Morabaraba demo bot "miller": first.c with MILLER defined, so that of
 * its legal moves it plays the one that forms a mill, blocks the
 * opponent's or prepares its own (see score()). A bot is one file, so
 * the rules are repeated here. */
#define MILLER 1
/* Morabaraba demo bot "first" (and, with -DMILLER, "miller" shares this
 * file's rules): keeps the position from the moves it reads and plays the
 * first legal move in a fixed order. Points are "x y s": x 1..3 from the
 * left, y 1..3 from the bottom, s 1..3 from the outer square; "2 2 s" does
 * not exist. Moves are nine numbers "from to shot", zeros for none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 24
static int PX[N], PY[N], PS[N];
static int mills[20][3];
static int nmills;
static int cell[N];       /* -1 free, 0 player 1, 1 player 2 */
static int in_hand[2] = {12, 12};
static int turn;          /* moves played */
static unsigned forbidden[2];

static int point(int x, int y, int s) {
    for (int i = 0; i < N; i++)
        if (PX[i] == x && PY[i] == y && PS[i] == s) return i;
    return -1;
}

static void setup(void) {
    int n = 0;
    for (int s = 1; s <= 3; s++)
        for (int y = 1; y <= 3; y++)
            for (int x = 1; x <= 3; x++)
                if (!(x == 2 && y == 2)) { PX[n] = x; PY[n] = y; PS[n] = s; n++; }
    for (int s = 1; s <= 3; s++) {
        int sides[4][3][2] = {{{1,1},{2,1},{3,1}}, {{1,3},{2,3},{3,3}},
                              {{1,1},{1,2},{1,3}}, {{3,1},{3,2},{3,3}}};
        for (int k = 0; k < 4; k++) {
            for (int j = 0; j < 3; j++)
                mills[nmills][j] = point(sides[k][j][0], sides[k][j][1], s);
            nmills++;
        }
    }
    for (int y = 1; y <= 3; y++)
        for (int x = 1; x <= 3; x++)
            if (!(x == 2 && y == 2)) {
                for (int s = 1; s <= 3; s++) mills[nmills][s - 1] = point(x, y, s);
                nmills++;
            }
    for (int i = 0; i < N; i++) cell[i] = -1;
}

static int adjacent(int a, int b) {
    if (PS[a] == PS[b]) return abs(PX[a] - PX[b]) + abs(PY[a] - PY[b]) == 1;
    return PX[a] == PX[b] && PY[a] == PY[b] && abs(PS[a] - PS[b]) == 1;
}

static unsigned mills_of(int who, int q, const int *c) {
    unsigned set = 0;
    for (int m = 0; m < nmills; m++) {
        int *l = mills[m];
        if ((l[0] == q || l[1] == q || l[2] == q) && c[l[0]] == who && c[l[1]] == who &&
            c[l[2]] == who)
            set |= 1u << m;
    }
    return set;
}

static int on_board(int who) {
    int n = 0;
    for (int i = 0; i < N; i++) n += cell[i] == who;
    return n;
}

static int placing(void) { return turn < 24; }

/* Plays from -> to, shot for `who` (no checks: the moves are legal). */
static void apply(int who, int from, int to, int shot) {
    unsigned broken = from >= 0 ? mills_of(who, from, cell) : 0;
    if (from >= 0) cell[from] = -1; else in_hand[who]--;
    cell[to] = who;
    unsigned formed = mills_of(who, to, cell);
    if (shot >= 0) cell[shot] = -1;
    forbidden[who] = (formed && broken) ? broken : 0;
    turn++;
}

/* The opponent's cows a mill may shoot: not in a mill, else any. */
static int targets(int who, int *out) {
    int them = 1 - who, n = 0, all[N], na = 0;
    for (int i = 0; i < N; i++)
        if (cell[i] == them) {
            all[na++] = i;
            if (!mills_of(them, i, cell)) out[n++] = i;
        }
    if (n == 0) { memcpy(out, all, sizeof(int) * na); n = na; }
    return n;
}

typedef struct { int from, to, shot; int score; } Move;

static int legal_moves(int who, Move *moves) {
    int n = 0, fly = !placing() && on_board(who) + in_hand[who] == 3;
    for (int from = placing() ? -1 : 0; from < N; from++) {
        if (from >= 0 && cell[from] != who) continue;
        for (int to = 0; to < N; to++) {
            if (cell[to] != -1) continue;
            if (from >= 0 && !fly && !adjacent(from, to)) continue;
            int after[N];
            memcpy(after, cell, sizeof after);
            if (from >= 0) after[from] = -1;
            after[to] = who;
            unsigned formed = mills_of(who, to, after);
            if (formed & forbidden[who]) continue;
            if (formed) {
                int t[N], nt = targets(who, t);
                if (nt == 0) moves[n++] = (Move){from, to, -1, 0};
                for (int k = 0; k < nt; k++) moves[n++] = (Move){from, to, t[k], 0};
            } else {
                moves[n++] = (Move){from, to, -1, 0};
            }
        }
        if (from < 0) break;
    }
    return n;
}

#ifdef MILLER
/* How good a move looks: a mill is worth most; then taking a point that
 * the opponent needs for a mill, then one that makes two of ours in a
 * line with the third free. */
static int score(int who, Move m) {
    int s = 0, them = 1 - who;
    if (m.shot >= 0) s += 100;
    for (int k = 0; k < nmills; k++) {
        int *l = mills[k];
        if (l[0] != m.to && l[1] != m.to && l[2] != m.to) continue;
        int mine = 0, theirs = 0;
        for (int j = 0; j < 3; j++) {
            if (l[j] == m.to || l[j] == m.from) continue;
            mine += cell[l[j]] == who;
            theirs += cell[l[j]] == them;
        }
        if (theirs == 2) s += 30;
        if (mine == 1 && theirs == 0) s += 5;
    }
    if (m.from >= 0) /* leaving a point the opponent could use */
        for (int k = 0; k < nmills; k++) {
            int *l = mills[k];
            if (l[0] != m.from && l[1] != m.from && l[2] != m.from) continue;
            int theirs = 0;
            for (int j = 0; j < 3; j++) theirs += cell[l[j]] == them;
            if (theirs == 2) s -= 25;
        }
    return s;
}
#define NAME "miller"
#else
#define NAME "first"
#endif

static void print_point(int q) {
    if (q < 0) printf("0 0 0");
    else printf("%d %d %d", PX[q], PY[q], PS[q]);
}

int main(void) {
    char line[256];
    int me;
    setup();
    if (!fgets(line, sizeof line, stdin)) return 0;
    me = atoi(line) - 1;
    printf("%s\n", NAME);
    fflush(stdout);
    int to_move = 0;
    for (;;) {
        if (to_move == me) {
            static Move moves[24 * 24 * 24];
            int n = legal_moves(me, moves);
            if (n == 0) return 0;
            int best = 0;
#ifdef MILLER
            int bs = -1000000;
            for (int i = 0; i < n; i++) {
                int s = score(me, moves[i]);
                if (s > bs) { bs = s; best = i; }
            }
#endif
            Move m = moves[best];
            print_point(m.from); printf(" ");
            print_point(m.to); printf(" ");
            print_point(m.shot); printf("\n");
            fflush(stdout);
            apply(me, m.from, m.to, m.shot);
        } else {
            int v[9];
            if (!fgets(line, sizeof line, stdin)) return 0;
            if (sscanf(line, "%d %d %d %d %d %d %d %d %d", &v[0], &v[1], &v[2], &v[3], &v[4],
                       &v[5], &v[6], &v[7], &v[8]) != 9)
                return 0;
            if (v[3] == 0) return 0; /* nine zeros: the game is over */
            apply(1 - me, v[0] ? point(v[0], v[1], v[2]) : -1, point(v[3], v[4], v[5]),
                  v[6] ? point(v[6], v[7], v[8]) : -1);
        }
        to_move = 1 - to_move;
    }
}
