# Ultimatum demo bot "adaptive": asks for as much as its opponent lets it
# and answers in kind. Its offer starts at 450; each accepted offer makes
# the next 10 lower (down to 150), each rejection 40 higher (up to 550).
# It accepts an offer when it is at least 60 % of the mean offer the
# opponent has made so far, or at least 300.
import sys

offer = 450
offers_seen = 0
offers_sum = 0
for line in sys.stdin:
    word = line.split()
    if not word:
        continue
    if word[0] == "START":
        print(offer, flush=True)
    elif word[0] == "ANGEBOT":
        x = int(word[1])
        mean = offers_sum / offers_seen if offers_seen else x
        offers_seen += 1
        offers_sum += x
        print("JA" if x >= 300 or x >= 0.6 * mean else "NEIN", flush=True)
    elif word[0] == "JA":
        offer = max(150, offer - 10)
    elif word[0] == "NEIN":
        offer = min(550, offer + 40)
    elif word[0] == "ENDE":
        break
