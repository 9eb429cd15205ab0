# Ultimatum demo bot "random": offers a random amount from 0 to 1000 and
# accepts or rejects at random. Its generator has a fixed seed, so it plays
# the same way every time.
import random
import sys

rng = random.Random(2011)
for line in sys.stdin:
    word = line.split()
    if not word:
        continue
    if word[0] == "START":
        print(rng.randint(0, 1000), flush=True)
    elif word[0] == "ANGEBOT":
        print("JA" if rng.random() < 0.5 else "NEIN", flush=True)
    elif word[0] == "ENDE":
        break
