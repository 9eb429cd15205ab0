# Morabaraba demo bot "firstpy": keeps the position from the moves it
# reads and plays the first legal move in a fixed order. Points are
# "x y s": x 1..3 from the left, y 1..3 from the bottom, s 1..3 from the
# outer square; "2 2 s" does not exist. A move is "from to shot", nine
# numbers, zeros for none; nine zeros end the game.
import sys

POINTS = [(x, y, s) for s in (1, 2, 3) for y in (1, 2, 3) for x in (1, 2, 3)
          if (x, y) != (2, 2)]
MILLS = []
for s in (1, 2, 3):
    for side in (((1, 1), (2, 1), (3, 1)), ((1, 3), (2, 3), (3, 3)),
                 ((1, 1), (1, 2), (1, 3)), ((3, 1), (3, 2), (3, 3))):
        MILLS.append(tuple((x, y, s) for x, y in side))
for x, y, _ in POINTS[:8]:
    MILLS.append(tuple((x, y, s) for s in (1, 2, 3)))

cell = {p: None for p in POINTS}
in_hand = [12, 12]
turn = 0
forbidden = [set(), set()]


def adjacent(a, b):
    if a[2] == b[2]:
        return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1
    return a[:2] == b[:2] and abs(a[2] - b[2]) == 1


def mills_of(who, q, board):
    return {m for m in MILLS if q in m and all(board[r] == who for r in m)}


def apply(who, frm, to, shot):
    global turn
    broken = mills_of(who, frm, cell) if frm else set()
    if frm:
        cell[frm] = None
    else:
        in_hand[who] -= 1
    cell[to] = who
    formed = mills_of(who, to, cell)
    if shot:
        cell[shot] = None
    forbidden[who] = broken if formed and broken else set()
    turn += 1


def targets(who):
    them = 1 - who
    cows = [p for p in POINTS if cell[p] == them]
    free = [p for p in cows if not mills_of(them, p, cell)]
    return free or cows


def legal_moves(who):
    placing = turn < 24
    on_board = sum(1 for p in POINTS if cell[p] == who)
    fly = not placing and on_board + in_hand[who] == 3
    froms = [None] if placing else [p for p in POINTS if cell[p] == who]
    for frm in froms:
        for to in POINTS:
            if cell[to] is not None:
                continue
            if frm and not fly and not adjacent(frm, to):
                continue
            after = dict(cell)
            if frm:
                after[frm] = None
            after[to] = who
            formed = mills_of(who, to, after)
            if formed & forbidden[who]:
                continue
            shots = targets(who) if formed else []
            if not shots:
                yield frm, to, None
            for shot in shots:
                yield frm, to, shot


def text(p):
    return "0 0 0" if p is None else "%d %d %d" % p


def point(v):
    return None if v == (0, 0, 0) else tuple(v)


me = int(sys.stdin.readline()) - 1
print("firstpy", flush=True)
to_move = 0
while True:
    if to_move == me:
        move = next(legal_moves(me), None)
        if move is None:
            break
        print(" ".join(text(p) for p in move), flush=True)
        apply(me, *move)
    else:
        line = sys.stdin.readline()
        v = [int(t) for t in line.split()]
        if len(v) != 9 or v[3] == 0:
            break
        apply(1 - me, point(tuple(v[0:3])), point(tuple(v[3:6])), point(tuple(v[6:9])))
    to_move = 1 - to_move
