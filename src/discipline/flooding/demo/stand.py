# Flooding island demo bot "stand", in Python: it stays where it is
# (three times GO CURRENT a round) until its field sinks under it.
import sys

for line in sys.stdin:
    line = line.strip()
    if line.startswith("ROUND "):
        print("GO CURRENT\nGO CURRENT\nGO CURRENT", flush=True)
    elif line == "END":
        break
