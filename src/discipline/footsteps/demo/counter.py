# FootSteps demo bot "counter": bids one more than the opponent's mean bid
# so far (its first bid is 8), never more than it has, at least 1 while it
# has points.
import sys

mine = 50
seen = []
while True:
    if mine == 0:
        bid = 0
    else:
        guess = round(sum(seen) / len(seen)) + 1 if seen else 8
        bid = max(1, min(mine, guess))
    print(bid, flush=True)
    line = sys.stdin.readline().strip()
    if not line or line == "fin":
        break
    mine -= bid
    seen.append(int(line))
