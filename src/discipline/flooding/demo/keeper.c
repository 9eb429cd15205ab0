/* Flooding island demo bot "keeper": keeps the board as the referee
 * tells it, and spends each of its three actions on the first of: dry
 * its own field if it is flooded, dry a flooded neighbour, step to the
 * neighbour with the most land around it (radius 2) if that is more than
 * around its own field, else stay. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXW 1002
static char board[MAXW][MAXW]; /* [y][x], 1-based, '.' outside */
static int W, H, px, py;

static char at(int x, int y) {
    if (x < 1 || y < 1 || x > W || y > H) return '.';
    return board[y][x];
}

static int land_around(int x, int y) {
    int n = 0;
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++)
            if (abs(dx) + abs(dy) <= 2) {
                char c = at(x + dx, y + dy);
                n += c == '#' ? 2 : c == 'o' ? 1 : 0;
            }
    return n;
}

static const char *names[4] = {"NORTH", "EAST", "SOUTH", "WEST"};
static const int DX[4] = {0, 1, 0, -1}, DY[4] = {-1, 0, 1, 0};

static void act(void) {
    if (at(px, py) == 'o') {
        board[py][px] = '#';
        printf("DRY CURRENT\n");
        return;
    }
    for (int d = 0; d < 4; d++)
        if (at(px + DX[d], py + DY[d]) == 'o') {
            board[py + DY[d]][px + DX[d]] = '#';
            printf("DRY %s\n", names[d]);
            return;
        }
    int best = -1, best_score = land_around(px, py);
    for (int d = 0; d < 4; d++) {
        char c = at(px + DX[d], py + DY[d]);
        if (c == '.') continue;
        int s = land_around(px + DX[d], py + DY[d]);
        if (s > best_score) { best = d; best_score = s; }
    }
    if (best < 0) {
        printf("GO CURRENT\n");
        return;
    }
    px += DX[best];
    py += DY[best];
    printf("GO %s\n", names[best]);
}

int main(void) {
    static char line[4096];
    int row = 0, reading = 0;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        if (sscanf(line, "GAMEBOARDSTART %d,%d", &W, &H) == 2) {
            if (W < 1 || H < 1 || W >= MAXW || H >= MAXW) return 1;
            reading = 1;
            row = 0;
        } else if (strcmp(line, "GAMEBOARDEND") == 0) {
            reading = 0;
        } else if (reading) {
            row++;
            for (int x = 1; x <= W; x++)
                board[row][x] = line[x - 1] ? line[x - 1] : '.';
        } else if (strncmp(line, "ROUND ", 6) == 0) {
            int z;
            if (sscanf(line, "ROUND %d %d,%d", &z, &px, &py) != 3) return 1;
            for (int i = 0; i < 3; i++) act();
            fflush(stdout);
        } else if (strncmp(line, "FLOOD ", 6) == 0) {
            int x, y;
            if (sscanf(line, "FLOOD %d,%d", &x, &y) == 2 && at(x, y) != '.')
                board[y][x] = board[y][x] == '#' ? 'o' : '.';
        } else if (strcmp(line, "END") == 0) {
            break;
        }
    }
    return 0;
}
