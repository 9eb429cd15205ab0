# FootSteps demo bot "one", in Python: bids 1 while it has points, then 0.
import sys

points = 50
while True:
    bid = 1 if points > 0 else 0
    points -= bid
    print(bid, flush=True)
    line = sys.stdin.readline()
    if not line or line.strip() == "fin":
        break
