# Echo bot in Python 3: answers ECHO x with x, leaves at END.
import sys

for line in sys.stdin:
    parts = line.split()
    if parts[0] == "END":
        break
    print(parts[1], flush=True)
