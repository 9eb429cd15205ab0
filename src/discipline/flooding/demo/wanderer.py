# Flooding island demo bot "wanderer": keeps the board as the referee
# tells it. With each of its three actions it dries its own field or a
# flooded neighbour; with nothing to dry it walks toward the field with
# the most dry land within three steps, never onto water.
import sys

board = {}
width = height = 0
x = y = 0
DIRS = [("NORTH", 0, -1), ("EAST", 1, 0), ("SOUTH", 0, 1), ("WEST", -1, 0)]


def tile(fx, fy):
    return board.get((fx, fy), ".")


def land(fx, fy):
    n = 0
    for dy in range(-3, 4):
        for dx in range(-3, 4):
            if abs(dx) + abs(dy) <= 3:
                n += {"#": 2, "o": 1}.get(tile(fx + dx, fy + dy), 0)
    return n


def act():
    global x, y
    if tile(x, y) == "o":
        board[(x, y)] = "#"
        return "DRY CURRENT"
    for name, dx, dy in DIRS:
        if tile(x + dx, y + dy) == "o":
            board[(x + dx, y + dy)] = "#"
            return "DRY " + name
    best, best_score = None, land(x, y)
    for name, dx, dy in DIRS:
        if tile(x + dx, y + dy) != "." and land(x + dx, y + dy) > best_score:
            best, best_score = (name, dx, dy), land(x + dx, y + dy)
    if best is None:
        return "GO CURRENT"
    x, y = x + best[1], y + best[2]
    return "GO " + best[0]


rows = None
for line in sys.stdin:
    line = line.strip()
    if line.startswith("GAMEBOARDSTART "):
        width, height = map(int, line.split()[1].split(","))
        rows = []
    elif line == "GAMEBOARDEND":
        for ry, r in enumerate(rows, 1):
            for rx, c in enumerate(r, 1):
                board[(rx, ry)] = c
        rows = None
    elif rows is not None:
        rows.append(line)
    elif line.startswith("ROUND "):
        x, y = map(int, line.split()[2].split(","))
        print("\n".join(act() for _ in range(3)), flush=True)
    elif line.startswith("FLOOD "):
        fx, fy = map(int, line.split()[1].split(","))
        board[(fx, fy)] = "o" if tile(fx, fy) == "#" else "."
    elif line == "END":
        break
